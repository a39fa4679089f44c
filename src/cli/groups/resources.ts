// `trove ns|collections|files|research|webhooks|events` and `trove rules batch`: the public API's
// resources from the terminal. Commander wiring only; the work is in src/cli/commands/.
import { Command, Option } from 'commander';
import type { GlobalOptions } from '../connection.js';
import { exitOnCommanderError, setExitCode } from '../io.js';

type Opts = Record<string, unknown>;

/**
 * Commander exits 1 on a usage error (missing argument or option, unknown option); the CLI's
 * convention is 2 for those, 0 for --help. Set on a group before its subcommands are added, it
 * reaches them too.
 */
function usageErrorsExit2(command: Command): Command {
  return command.exitOverride(exitOnCommanderError);
}

const json = ['--json', 'print the API response as JSON'] as const;
const yes = ['-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)'] as const;
const namespaceOpt = ['-n, --namespace <name>', 'namespace (default: the one `trove init` saved, else "default")'] as const;
const collectionArg = ['<collection>', 'collection name or ID, or <namespace>/<collection>'] as const;
/** A collection argument that may be left out: -c, else the collection `trove init` saved. */
const optionalCollectionArg = ['[collection]', 'collection name or ID, or <namespace>/<collection> (default: -c, else the one `trove init` saved)'] as const;
const collectionOpt = ['-c, --collection <name>', 'collection, instead of the argument (default: the one `trove init` saved)'] as const;
const listing = (command: Command) =>
  command
    .option('--limit <n>', 'items per page (1-100; default 50, or 100 with --all)')
    .option('--cursor <cursor>', 'continue from the next_cursor of an earlier page')
    .option('--all', 'follow next_cursor and list every item (--json: one array)');

export function registerResourceCommands(program: Command, rules: Command): void {
  const global = () => program.opts() as GlobalOptions;

  // ---------------------------------------------------------------- ns
  const ns = usageErrorsExit2(program.command('ns').description('Namespaces: create, list, get, delete, restore'));
  ns.command('create')
    .description('Create a namespace (cluster key)')
    .argument('<name>', 'namespace name (1-63 lowercase letters, digits, _ and -)')
    .option('--display-name <label>', 'a human label')
    .option('--exist-ok', 'succeed with the existing namespace if the name is taken')
    .option(...json)
    .action(async (name: string, opts: Opts) => {
      setExitCode(await (await import('../commands/ns.js')).runNamespaceCreate(name, global(), opts));
    });
  listing(ns.command('list').description('List the namespaces this key can see'))
    .option(...json)
    .action(async (opts: Opts) => {
      setExitCode(await (await import('../commands/ns.js')).runNamespaceList(global(), opts));
    });
  ns.command('get')
    .description('Show a namespace and its usage')
    .argument('<namespace>', 'namespace name or ns_ ID')
    .option(...json)
    .action(async (ref: string, opts: Opts) => {
      setExitCode(await (await import('../commands/ns.js')).runNamespaceGet(ref, global(), opts));
    });
  ns.command('delete')
    .description('Delete a namespace (restorable during the recovery window)')
    .argument('<namespace>', 'namespace name or ns_ ID')
    .option('--force', 'also delete its collections (without it, a namespace with collections is refused)')
    .option(...yes)
    .option(...json)
    .action(async (ref: string, opts: Opts) => {
      setExitCode(await (await import('../commands/ns.js')).runNamespaceDelete(ref, global(), opts));
    });
  ns.command('restore')
    .description('Restore a deleted namespace within its recovery window (over the operator channel)')
    .argument('<namespace>', 'namespace name or ns_ ID')
    .option(...json)
    .action(async (ref: string, opts: Opts) => {
      setExitCode(await (await import('../commands/ns-restore.js')).runNamespaceRestore(ref, global(), opts));
    });

  // ---------------------------------------------------------------- collections
  const processingFlags = (command: Command) =>
    command
      .option('--keyword', 'enable keyword (BM25) retrieval')
      .option('--no-keyword', 'disable keyword retrieval')
      .option('--semantic', 'enable semantic (vector) retrieval')
      .option('--no-semantic', 'disable semantic retrieval (no embeddings are computed)')
      .option('--ocr', 'read text from images and scanned pages')
      .option('--no-ocr', 'do not run OCR')
      .option('--chunk-tokens <n>', 'passage size in tokens (64-2048)')
      .option('--chunk-overlap <n>', 'tokens shared by consecutive passages (smaller than the chunk size)');
  const accessControl = new Option('--access-control <mode>', 'enforce access rules on retrieval, or not').choices(['off', 'enforced']);

  const collections = usageErrorsExit2(program.command('collections').description('Collections of a namespace: create, list, get, update, delete, reindex'));
  processingFlags(
    collections
      .command('create')
      .description('Create a collection')
      .argument(...collectionArg)
      .option(...namespaceOpt)
      .option('--display-name <label>', 'a human label')
      .option('--exist-ok', 'succeed with the existing collection if the name is taken')
      .addOption(accessControl),
  )
    .option(...json)
    .action(async (ref: string, opts: Opts) => {
      setExitCode(await (await import('../commands/collections.js')).runCollectionCreate(ref, global(), opts));
    });
  listing(collections.command('list').description('List the collections of a namespace').option(...namespaceOpt))
    .option(...json)
    .action(async (opts: Opts) => {
      setExitCode(await (await import('../commands/collections.js')).runCollectionList(global(), opts));
    });
  collections
    .command('get')
    .description('Show a collection: status, file counts, processing')
    .argument(...optionalCollectionArg)
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option(...json)
    .action(async (ref: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/collections.js')).runCollectionGet(ref, global(), opts));
    });
  processingFlags(
    collections
      .command('update')
      .description('Change a collection; processing changes that need it start a reindex job')
      .argument(...optionalCollectionArg)
      .option(...namespaceOpt)
      .option(...collectionOpt)
      .option('--display-name <label>', 'a human label ("" clears it)')
      .addOption(new Option('--access-control <mode>', 'enforce access rules on retrieval, or not').choices(['off', 'enforced'])),
  )
    .option(...json)
    .action(async (ref: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/collections.js')).runCollectionUpdate(ref, global(), opts));
    });
  collections
    .command('delete')
    .description('Delete a collection and its files (restorable during the recovery window)')
    .argument(...optionalCollectionArg)
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option(...yes)
    .option(...json)
    .action(async (ref: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/collections.js')).runCollectionDelete(ref, global(), opts));
    });
  collections
    .command('reindex')
    .description('Index every file of a collection again; prints the job')
    .argument(...optionalCollectionArg)
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option('--wait', 'wait until the job ends (exit 1 unless it succeeded)')
    .option(...json)
    .action(async (ref: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/collections.js')).runCollectionReindex(ref, global(), opts));
    });

  // ---------------------------------------------------------------- files
  // Optional to commander so that `files get <file>` can leave the collection to -c or the saved default;
  // the command says when it is missing.
  const fileArg = ['[file]', 'fil_ ID, or the file path (/docs/a.md)'] as const;
  const files = usageErrorsExit2(program.command('files').description('Files of a collection: list, get, add, delete, reindex'));
  listing(
    files
      .command('list')
      .description('List the files of a collection, oldest first')
      .argument(...optionalCollectionArg)
      .option(...namespaceOpt)
      .option(...collectionOpt)
      .addOption(new Option('--status <status>', 'only files in this state').choices(['pending', 'indexing', 'ready', 'failed']))
      .option('--prefix <path>', 'only paths starting with this text'),
  )
    .option(...json)
    .action(async (ref: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/files.js')).runFileList(ref, global(), opts));
    });
  files
    .command('get')
    .description('Show a file: status, source, metadata, error')
    .usage('[options] [collection] <file>')
    .argument(...optionalCollectionArg)
    .argument(...fileArg)
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option(...json)
    .action(async (ref: string | undefined, file: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/files.js')).runFileGet(ref, file, global(), opts));
    });
  files
    .command('add')
    .description('Add a file (or a new version of the file at that path): a local file, --text or --uri')
    .usage('[options] [collection] [local-file]')
    .argument(...optionalCollectionArg)
    .argument('[local-file]', 'a local file to upload')
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option('--text <text>', 'inline text as the content (needs --path)')
    // Not --url: that is the global flag naming the daemon, and commander reads it after the subcommand too.
    .option('--uri <uri>', 'a URI the daemon fetches (http(s), or file:// under an allowed root)')
    .option('--path <path>', 'path in the collection (default: / + the file name)')
    .option('--content-type <type>', 'MIME type (default: from the name, or text/plain for --text)')
    .option('--metadata <json>', 'metadata as a JSON object, e.g. \'{"team":"docs"}\'')
    .option('--wait', 'wait until the file is ready or failed (exit 8 if it failed)')
    .option(...json)
    .action(async (ref: string | undefined, localFile: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/files.js')).runFileAdd(ref, localFile, global(), opts));
    });
  files
    .command('delete')
    .description('Delete a file')
    .usage('[options] [collection] <file>')
    .argument(...optionalCollectionArg)
    .argument(...fileArg)
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option(...yes)
    .option(...json)
    .action(async (ref: string | undefined, file: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/files.js')).runFileDelete(ref, file, global(), opts));
    });
  files
    .command('reindex')
    .description('Index a file again from its stored source (a new version of the same file)')
    .usage('[options] [collection] <file>')
    .argument(...optionalCollectionArg)
    .argument(...fileArg)
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option('--wait', 'wait until the file is ready or failed (exit 8 if it failed)')
    .option(...json)
    .action(async (ref: string | undefined, file: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/files.js')).runFileReindex(ref, file, global(), opts));
    });

  // ---------------------------------------------------------------- research
  const runArg = ['<run>', 'the rsr_ ID of the run'] as const;
  const research = usageErrorsExit2(program.command('research').description('Research runs: start, get, watch, cancel'));
  research
    .command('start')
    .description('Start a research run (an answer computed in the background)')
    .argument(...collectionArg)
    .argument('<query>', 'the question')
    .option(...namespaceOpt)
    .addOption(new Option('--mode <mode>', 'how much of the collection to read').choices(['standard', 'ultra', 'recall']))
    .option('--filter <json>', 'filter clause as JSON')
    .option('--principal <principal...>', 'principals the run may draw from (collections with access rules)')
    .option('--history <json>', 'earlier turns as a JSON array of {role, content}, oldest first')
    .option('--no-sources', 'do not return the sources map')
    .option('--web-search', 'allow web search when the deployment has it (ultra; cluster key)')
    .option('--image <file>', 'a query image (.png, .jpg, .webp; cluster key)')
    .option('--idempotency-key <key>', 'retry-safe key for this request (default: a new random one, printed)')
    .option('--watch', 'follow the run until it ends and print the answer')
    .option(...json)
    .action(async (ref: string, query: string, opts: Opts) => {
      setExitCode(await (await import('../commands/research.js')).runResearchStart(ref, query, global(), opts));
    });
  research
    .command('get')
    .description('Show a research run: status, progress, answer and sources')
    .argument(...collectionArg)
    .argument(...runArg)
    .option(...namespaceOpt)
    .option(...json)
    .action(async (ref: string, id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/research.js')).runResearchGet(ref, id, global(), opts));
    });
  research
    .command('watch')
    .description('Follow a run stage by stage until it ends, then print the answer with its sources')
    .argument(...collectionArg)
    .argument(...runArg)
    .option(...namespaceOpt)
    .option('--json', 'print one JSON line per progress change, then the run')
    .action(async (ref: string, id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/research.js')).runResearchWatch(ref, id, global(), opts));
    });
  research
    .command('cancel')
    .description('Cancel a queued or running run (a finished run is returned unchanged)')
    .argument(...collectionArg)
    .argument(...runArg)
    .option(...namespaceOpt)
    .option(...json)
    .action(async (ref: string, id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/research.js')).runResearchCancel(ref, id, global(), opts));
    });

  // ---------------------------------------------------------------- webhooks
  const workspaceOpt = ['-n, --namespace <name>', 'the workspace (namespace) of the webhooks (default: "default")'] as const;
  const webhookArg = ['<webhook>', "the webhook's ID (whk_…) or its name"] as const;
  const webhooks = usageErrorsExit2(program.command('webhooks').description('Webhooks of a workspace: create, list, get, update, delete, test, deliveries, replay, rotate'));
  webhooks
    .command('create')
    .description('Register a webhook; its signing secret is printed once')
    .argument('<name>', 'a name for the webhook')
    // Not --url: that is the global flag naming the daemon, and commander reads it after the subcommand too.
    .argument('<url>', 'the receiving URL (https; http://127.0.0.1 needs the daemon flag --allow-insecure-webhooks)')
    .option('--event-type <type...>', 'only these event types (default: every type)')
    .option('--bucket <collection...>', 'only events of these collections (default: all)')
    .addOption(new Option('--owner <owner>', 'a personal webhook, or one of the workspace').choices(['me', 'workspace']))
    .option(...workspaceOpt)
    .option(...json)
    .action(async (name: string, url: string, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookCreate(name, url, global(), opts));
    });
  listing(webhooks.command('list').description("List the workspace's webhooks").option(...workspaceOpt))
    .option(...json)
    .action(async (opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookList(global(), opts));
    });
  webhooks
    .command('get')
    .description('Show a webhook')
    .argument(...webhookArg)
    .option(...workspaceOpt)
    .option(...json)
    .action(async (id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookGet(id, global(), opts));
    });
  webhooks
    .command('update')
    .description('Change a webhook; --disable ends its pending deliveries as failed')
    .argument(...webhookArg)
    .option('--name <name>', 'a new name')
    .option('--endpoint <url>', 'a new receiving URL')
    .option('--event-type <type...>', 'only these event types')
    .option('--all-events', 'every event type, including types added later')
    .option('--bucket <collection...>', 'only events of these collections')
    .option('--all-buckets', 'events of every collection, including ones created later')
    .option('--enable', 'turn the webhook on (it starts from the newest event)')
    .option('--disable', 'turn the webhook off')
    .option(...workspaceOpt)
    .option(...json)
    .action(async (id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookUpdate(id, global(), opts));
    });
  webhooks
    .command('delete')
    .description('Delete a webhook and its delivery log (--disable keeps the log)')
    .argument(...webhookArg)
    .option(...yes)
    .option(...workspaceOpt)
    .option(...json)
    .action(async (id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookDelete(id, global(), opts));
    });
  webhooks
    .command('test')
    .description("Send one signed webhook.test event and show the receiver's answer (exit 1 unless 2xx)")
    .argument(...webhookArg)
    .option(...workspaceOpt)
    .option(...json)
    .action(async (id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookTest(id, global(), opts));
    });
  listing(
    webhooks
      .command('deliveries')
      .description('The delivery log, newest first; with a delivery ID, that delivery with its body and every attempt')
      .argument(...webhookArg)
      .argument('[delivery]', 'a dlv_ ID: show that delivery in full')
      .addOption(new Option('--status <status>', 'only deliveries in this state').choices(['pending', 'succeeded', 'failed']))
      .option(...workspaceOpt),
  )
    .option(...json)
    .action(async (id: string, delivery: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookDeliveries(id, delivery, global(), opts));
    });
  webhooks
    .command('replay')
    .description('Send logged events again (same event ID and body, new timestamp and signature)')
    .argument(...webhookArg)
    .option('--since <date-time>', 'events from this time (ISO 8601 with a timezone)')
    .option('--until <date-time>', 'events before this time')
    .option('--only-failed', 'skip deliveries that succeeded')
    .option('--event <id...>', 'these events (evt_ IDs) instead of a time range')
    .option(...workspaceOpt)
    .option(...json)
    .action(async (id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookReplay(id, global(), opts));
    });
  webhooks
    .command('rotate')
    .description('Replace the signing secret; the new one is printed once')
    .argument(...webhookArg)
    .option('--overlap <seconds>', 'how long the previous secret keeps signing (0-604800, default 86400)')
    .option(...workspaceOpt)
    .option(...json)
    .action(async (id: string, opts: Opts) => {
      setExitCode(await (await import('../commands/webhooks.js')).runWebhookRotate(id, global(), opts));
    });

  // ---------------------------------------------------------------- events
  const events = usageErrorsExit2(program.command('events').description('The event log: status changes of jobs, files, collections and research runs'));
  events
    .command('tail')
    .description('Print the newest events; --follow keeps printing them as they happen')
    .option('-f, --follow', 'keep the stream open and print new events (Ctrl-C stops)')
    .option('--after <event>', 'start after this event ID (then every later event is printed)')
    .option('--type <type...>', "only these event types ('file.*' matches every file event)")
    .option('--limit <n>', 'how many of the newest events to print first (default 20; all after --after)')
    .option('--json', 'print each event as one JSON line')
    .action(async (opts: Opts) => {
      setExitCode(await (await import('../commands/events.js')).runEventsTail(global(), opts));
    });

  // ---------------------------------------------------------------- rules batch
  usageErrorsExit2(rules.command('batch'))
    .description('Apply a JSON or YAML file of rule operations (upsert, update, delete) in one transaction')
    .usage('[options] [collection] <file>')
    .argument(...optionalCollectionArg)
    .argument('[file]', 'the operations file ({operations: [...]} or a list; - reads stdin)')
    .option(...namespaceOpt)
    .option(...collectionOpt)
    .option(...json)
    .action(async (collection: string | undefined, file: string | undefined, opts: Opts) => {
      setExitCode(await (await import('../commands/rules-batch.js')).runRulesBatch(collection, file, global(), opts));
    });
}
