// Generates a large application for the scale benchmarks (scenarios/validate-scale.mjs,
// scenarios/p5-startup.mjs): COUNT endpoints in nested folders, each with parameters and three
// tasks (a JSON-body HttpRequest with an output, a dependent HttpRequest using it, an Email task
// with an attachment-static), a static/ file and email-sending-configuration.xml. The templates use
// ${env:CRM_TOKEN}: set it when serving.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ENDPOINTS_PER_FOLDER = 50;

function endpoint(i) {
  return `    <endpoint name="signup-${i}">
      <parameter name="customer-name"/>
      <parameter name="email"/>
      <parameter name="plan" default-value="basic"/>
      <success if="\${plan}" equals="enterprise">
        <redirect-to>https://www.example.com/enterprise/welcome?name=\${customer-name}</redirect-to>
      </success>
      <success>
        <redirect-to>https://www.example.com/welcome?name=\${customer-name}&amp;plan=\${plan}</redirect-to>
        <redirect-prefix-whitelist-entry>https://www.example.com/</redirect-prefix-whitelist-entry>
      </success>
      <task class="HttpRequest" id="create-customer" timeout="5s" retries="2">
        <url>https://crm.example.com/api/v2/customers</url>
        <request-header name="Authorization">Bearer \${env:CRM_TOKEN}</request-header>
        <json-body>{"name": "\${customer-name}", "email": "\${email}", "plan": "\${plan}", "source": "signup-${i}", "tags": ["web", "\${endpoint}"]}</json-body>
        <output-intermediate-value name="customer-id" jsonpath="$.data.id" regex="[0-9]+"/>
      </task>
      <task class="HttpRequest" id="add-note">
        <input-intermediate-value name="customer-id"/>
        <url>https://crm.example.com/api/v2/customers/\${customer-id}/notes</url>
        <method name="POST"/>
        <request-header name="Authorization">Bearer \${env:CRM_TOKEN}</request-header>
        <json-body>{"text": "Signed up via \${endpoint}", "request": "\${request-id}"}</json-body>
      </task>
      <task class="Email" id="welcome" if="\${email}" isempty="false">
        <after task-id="create-customer"/>
        <from>hello@example.com</from>
        <to>signups@example.com</to>
        <reply-to>\${email}</reply-to>
        <subject>Welcome, \${customer-name}</subject>
        <body>Hello \${customer-name},

your \${plan} plan is ready.</body>
        <body content-type="text/html"><![CDATA[<p>Hello <b>\${customer-name}</b>,</p><p>your \${plan} plan is ready.</p>]]></body>
        <attachment-static filename="terms/terms-of-service.txt"/>
      </task>
    </endpoint>
`;
}

export function generate(dir, count) {
  mkdirSync(path.join(dir, 'static/terms'), { recursive: true });
  writeFileSync(path.join(dir, 'static/terms/terms-of-service.txt'), 'Terms of service.\n');
  writeFileSync(
    path.join(dir, 'email-sending-configuration.xml'),
    '<email-sending-configuration>\n  <server>smtp.example.com</server>\n  <header name="X-Sent-By">bench</header>\n</email-sending-configuration>\n',
  );
  let xml = '<?xml version="1.0" encoding="UTF-8"?>\n<endpoint-folder multiple-value-separator="||">\n  <parameter name="locale" default-value="en"/>\n';
  for (let start = 0; start < count; start += ENDPOINTS_PER_FOLDER) {
    xml += `  <endpoint-folder>\n    <parameter name="campaign" default-value="folder-${start / ENDPOINTS_PER_FOLDER}"/>\n`;
    for (let i = start; i < Math.min(count, start + ENDPOINTS_PER_FOLDER); i++) xml += endpoint(i);
    xml += '  </endpoint-folder>\n';
  }
  xml += '</endpoint-folder>\n';
  const file = path.join(dir, 'endpoints.xml');
  writeFileSync(file, xml);
  return file;
}

/**
 * A light application of COUNT endpoints like P1's (two parameters, an empty success, no
 * task), in folders of 50: what start-up costs per endpoint when endpoints are small.
 */
export function generateLight(dir, count) {
  let xml = '<?xml version="1.0" encoding="UTF-8"?>\n<endpoint-folder>\n';
  for (let start = 0; start < count; start += ENDPOINTS_PER_FOLDER) {
    xml += '  <endpoint-folder>\n';
    for (let i = start; i < Math.min(count, start + ENDPOINTS_PER_FOLDER); i++) {
      xml += `    <endpoint name="e${i}">\n      <parameter name="a"/>\n      <parameter name="b"/>\n    </endpoint>\n`;
    }
    xml += '  </endpoint-folder>\n';
  }
  xml += '</endpoint-folder>\n';
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'endpoints.xml');
  writeFileSync(file, xml);
  return file;
}
