// `endpoint-service init [dir]`: writes a minimal working application into an empty or new
// folder, then prints the next three commands, written the way this run was started so that
// they work where it was run (invocation.ts). It never overwrites: a folder that holds anything
// is refused with exit 2 and nothing written, and a write that fails half way takes back what it
// wrote (README, "Start a new application").
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ExitCode } from './action.js';
import { commandAsInvoked, shellWord } from './invocation.js';

/** The schemas shipped in the package, copied beside the application for editors. */
const SCHEMAS = ['endpoints.xsd', 'email-sending-configuration.xsd', 'security.xsd'] as const;
const SCHEMA_DIRECTORY = new URL('../../schema/', import.meta.url);

const ENDPOINTS_XML = `<?xml version="1.0" encoding="UTF-8"?>
<!--
  A first endpoint-service application, written by endpoint-service init.

  GET or POST /contact with a name and an email (a message is optional): the answer comes at
  once (tasks="background"), then a CRM is called and the office gets a mail; a task that fails
  is logged. The CRM and the addresses are examples: put in your own. The reference of this
  file is docs/language.md in the endpoint-service package; schema/endpoints.xsd beside it
  gives editors completion and help on hover.
-->
<endpoint-folder xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                 xsi:noNamespaceSchemaLocation="schema/endpoints.xsd">
  <endpoint name="contact" tasks="background">
    <!-- Required: a request without a name or an email (or with a blank one, or an email
         that is not one address) is answered 400, before anything runs. -->
    <parameter name="name" max-length="200"/>
    <parameter name="email" format="email"/>
    <!-- Optional: the default applies when the request does not send it. -->
    <parameter name="message" default-value="" max-length="5000"/>

    <success>
      <response-body content-type="application/json">{"received": true, "request": "\${request-id}"}</response-body>
    </success>

    <task class="HttpRequest" id="save-contact" timeout="10s" retries="2">
      <url>https://crm.example.com/api/contacts</url>
      <json-body>{"name": "\${name}", "email": "\${email}", "message": "\${message}"}</json-body>
    </task>

    <task class="Email" id="notify-office">
      <after task-id="save-contact"/>
      <from>forms@example.com</from>
      <to>office@example.com</to>
      <reply-to>\${email}</reply-to>
      <subject>Contact from \${name}</subject>
      <body>\${name} (\${email}) wrote:

\${message}</body>
    </task>
  </endpoint>
</endpoint-folder>
`;

const EMAIL_SETTINGS_XML = `<?xml version="1.0" encoding="UTF-8"?>
<!--
  The SMTP server the Email task sends through. \${env:SMTP_HOST} is read from the environment
  where the service runs, so this file names no machine and holds no secret. Add <port>, and
  <username> with <password> (written as \${env:SMTP_PASSWORD}) when your server needs them;
  serve's smtp-url option replaces these settings.
-->
<email-sending-configuration xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
                             xsi:noNamespaceSchemaLocation="schema/email-sending-configuration.xsd">
  <server>\${env:SMTP_HOST}</server>
</email-sending-configuration>
`;

export function init(dir: string): ExitCode {
  const refuse = (reason: string): ExitCode => {
    process.stderr.write(`endpoint-service: init: ${reason}\n`);
    return 2;
  };
  let existing: string[] | null = null;
  try {
    if (!statSync(dir).isDirectory()) return refuse(`${dir} is a file, not a folder: give a new or empty folder.`);
    existing = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return refuse(`cannot read ${dir}: ${(error as Error).message}`);
  }
  if (existing !== null && existing.length > 0) {
    const shown = existing.sort().slice(0, 3).join(', ') + (existing.length > 3 ? `, … (${existing.length} entries)` : '');
    return refuse(`${dir} is not empty (it holds ${shown}): init writes only into an empty or new folder, so nothing was written.`);
  }

  const files: [string, string][] = [
    ['endpoints.xml', ENDPOINTS_XML],
    ['email-sending-configuration.xml', EMAIL_SETTINGS_XML],
    ...SCHEMAS.map((name): [string, string] => [path.join('schema', name), readFileSync(new URL(name, SCHEMA_DIRECTORY), 'utf8')]),
  ];
  // What was made, to take back if a write fails: nothing is left half written.
  const made: string[] = [];
  try {
    if (existing === null) made.push(mkdirSync(dir, { recursive: true }) ?? dir);
    mkdirSync(path.join(dir, 'schema'));
    made.push(path.join(dir, 'schema'));
    for (const [name, content] of files) {
      // 'wx': never replace a file, even one that appeared since the folder was found empty.
      writeFileSync(path.join(dir, name), content, { flag: 'wx' });
      made.push(path.join(dir, name));
    }
  } catch (error) {
    for (const target of made.reverse()) rmSync(target, { recursive: true, force: true });
    return refuse(`cannot write into ${dir}: ${(error as Error).message}; nothing was kept.`);
  }

  const shown = (name: string) => shellWord(path.join(dir, name));
  const written: [string, string][] = [
    [shown('endpoints.xml'), 'the endpoint "contact": parameters, a response, an HttpRequest and an Email task'],
    [shown('email-sending-configuration.xml'), 'the SMTP server, from ${env:SMTP_HOST}'],
    [`${shown('schema')}/`, 'schemas for editors: completion and help on hover (docs/editors.md)'],
  ];
  const command = commandAsInvoked({ env: process.env, script: process.argv[1] ?? 'endpoint-service', cwd: process.cwd() });
  const width = Math.max(...written.map(([name]) => name.length));
  process.stdout.write(
    `Wrote an endpoint-service application into ${dir === '.' ? 'this folder' : `${dir}/`}:\n` +
      written.map(([name, what]) => `  ${name.padEnd(width)}  ${what}\n`).join('') +
      `\nNext:\n` +
      `  ${command} validate ${shown('endpoints.xml')}\n` +
      `  ${command} dry-run --param name=Ann --param email=ann@example.com ${shown('endpoints.xml')}\n` +
      `  SMTP_HOST=localhost ${command} serve ${shown('endpoints.xml')}\n`,
  );
  return 0;
}
