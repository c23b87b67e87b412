// `endpoint-service deliveries`'s command line: list, show and replay what the delivery log
// holds (docs/deliveries.md). The store's client is loaded only when one runs.
import { Option, type Command } from 'commander';
import type { Returning } from '../action.js';
import type { DeliveriesFlags, DeliveriesServeFlags } from '../deliveries.js';
import { VERDICTS } from '../../deliveries/record.js';
import { age, oneOf, portNumber, positiveNumber } from '../option-parsers.js';
import { addDeliveryStoreOptions } from '../deliveries-options.js';

export function registerDeliveries(program: Command, returning: Returning): void {
  const deliveries = program.command('deliveries').description('what arrived, what was answered and what ran: the delivery log of serve');
  const sub = (name: string, description: string) =>
    addDeliveryStoreOptions(deliveries.command(name).description(description), 'the store serve records in')
      .addOption(new Option('--format <format>', 'text or json').argParser(oneOf('text', 'json')).default('text'))
      .exitOverride();

  sub('list', 'the newest deliveries first')
    .option('--endpoint <name>', 'only this endpoint')
    .addOption(new Option('--verdict <verdict>', 'only this verdict').choices(VERDICTS))
    .addOption(new Option('--since <age>', 'only those received within this time, such as 1h or 2d').argParser(age))
    .addOption(new Option('--limit <n>', 'at most this many').argParser(positiveNumber).default(50))
    .action(
      returning(async (flags: DeliveriesFlags, command: Command) => {
        const { listDeliveries } = await import('../deliveries.js');
        return listDeliveries(flags, command);
      }),
    );

  sub('show', 'one delivery: its verdict and reason, each task, the queue job; with --reveal, the request it received')
    .argument('<id>', 'the request id: the x-request-id of the answer')
    .option('--reveal', 'also print the request’s headers and body; needs the key the log was sealed with')
    .action(
      returning(async (id: string, flags: DeliveriesFlags, command: Command) => {
        const { showDelivery } = await import('../deliveries.js');
        return showDelivery(id, flags, command);
      }),
    );

  addDeliveryStoreOptions(
    deliveries.command('serve').description('serve the deliveries page alone, against the store serve records in'),
    'the store serve records in',
  )
    .exitOverride()
    .addOption(new Option('--port <n>', 'port of the page, 0 for any free port').argParser(portNumber).default(9465))
    .option('--host <address>', 'address of the page', '127.0.0.1')
    .action(
      returning(async (flags: DeliveriesServeFlags, command: Command) => {
        const { serveDeliveries } = await import('../deliveries.js');
        return serveDeliveries(flags, command);
      }),
    );

  sub('replay', 'send a delivery again through the application as configured now, by a running serve on the same store')
    .argument('<id>', 'the request id of the delivery to send again')
    .action(
      returning(async (id: string, flags: DeliveriesFlags, command: Command) => {
        const { replayDelivery } = await import('../deliveries.js');
        return replayDelivery(id, flags, command);
      }),
    );
}
