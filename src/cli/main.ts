// The trove CLI: commander wiring only; each command's work lives in src/cli/commands/<name>.ts.
// Each command's module is imported when that command runs, never here: one invocation runs one
// command, and loading them all (inquirer, cli-progress, ignore, the TUI, …) cost every command and
// `daemon start` their start-up time (issue 15: spawn to first answered request).
import { Command, Option } from 'commander';
import { registerOperatorCommands } from './groups/operator.js';
import { registerResourceCommands } from './groups/resources.js';
import { registerWorkflowCommands } from './groups/workflow.js';
import { registerTuiCommand } from './groups/tui.js';
import { registerMcpCommand } from './groups/mcp.js';
import { packageVersion } from '../contract/version.js';
import { cliArgs, commanderHasColors, errOut, exitOnCommanderError, helpWidth, invoke, out, processIo, setExitCode, type CliIo } from './io.js';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * Runs `trove <argv.slice(2)>` with `io` (by default the process's own) and returns its exit status;
 * nothing here exits the process or sets its exit code (src/cli/run.ts does, from the result).
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return invoke(io, argv.slice(2), async () => {
    // argv[0] and argv[1] are node and the script, said outright: commander would otherwise guess
    // from the process's own flags (-e/--eval), which are not the invocation's.
    await buildProgram().parseAsync(argv, { from: 'node' });
  });
}

/** The whole command tree (tests walk it to check that every command and option is described). */
export function buildProgram(): Command {
  const program = new Command('trove')
    .description('A local retrieval service: collections of files, searched with evidence.')
    .version(packageVersion(), '-V, --version', 'print the version of trove and exit')
    // A usage error (unknown option, missing argument) exits 2, as ERROR_TABLE's invalid_request
    // does; commands created below inherit this.
    .exitOverride(exitOnCommanderError)
    // Help, version and usage errors go to the invocation's streams; commands created below inherit this.
    .configureOutput({
      writeOut: (text) => void out().write(text),
      writeErr: (text) => void errOut().write(text),
      getOutHelpWidth: () => helpWidth(out()),
      getErrHelpWidth: () => helpWidth(errOut()),
      getOutHasColors: () => commanderHasColors(out()),
      getErrHasColors: () => commanderHasColors(errOut()),
    })
    .option('--url <url>', 'daemon URL (env TROVE_URL; default http://127.0.0.1:7410)')
    .option('--key <key>', "API key (env TROVE_KEY; default: the local daemon's cluster key file)")
    .option('--data-dir <dir>', 'data dir of the local daemon, to find its cluster key (env TROVE_DATA_DIR)')
    .option('-q, --quiet', 'print only errors and failed files: no plan, progress, notes or counts (ingest, ingest --watch, init)');

  const daemon = program.command('daemon').description('Run the trove daemon');
  daemon
    .command('start')
    .description('Start the daemon in the foreground (SIGINT/SIGTERM stop it cleanly)')
    .option('--data-dir <dir>', 'data dir (env TROVE_DATA_DIR; default ~/.local/share/trove)')
    .option('--host <host>', 'address to listen on (env TROVE_HOST)', undefined)
    .option('--port <port>', 'port, 0 picks a free one (env TROVE_PORT; default 7410)')
    .option('--ephemeral', 'use a temporary data dir removed on exit (for test fixtures)')
    .option('--json', 'print one JSON line {"event":"listening",…} once requests are answered')
    .option('--allow-file-root <dir>', 'allow file:// sources under this directory (repeatable; env TROVE_FILE_ROOTS, colon-separated)', collect)
    .option('--allow-private-sources', 'let http(s) sources reach loopback, private and link-local addresses')
    .option('--allow-insecure-webhooks', 'let webhooks deliver over http:// to loopback (env TROVE_ALLOW_INSECURE_WEBHOOKS=1)')
    .option('--webhook-retry-scale <factor>', 'multiply every webhook retry wait (env TROVE_WEBHOOK_RETRY_SCALE)')
    .option('--mcp-allowed-origin <origin>', 'a web origin that may call /mcp besides the daemon\'s own loopback ones (repeatable; env TROVE_MCP_ALLOWED_ORIGINS, comma-separated)', collect)
    .option('--mcp-allowed-host <host>', 'a host name /mcp answers to besides the bound address, e.g. a load balancer\'s (repeatable; env TROVE_MCP_ALLOWED_HOSTS)', collect)
    .option('--mcp-reply-budget <tokens>', 'most tokens (UTF-8 bytes / 4) one MCP tool reply may take (env TROVE_MCP_REPLY_BUDGET_TOKENS; default 25000)')
    .option('--drain-seconds <s>', 'on SIGINT/SIGTERM, how long requests in flight may finish before they are answered 503 (env TROVE_SHUTDOWN_DRAIN_SECONDS; default 10)')
    .option('--insecure', 'allow plain HTTP on a non-loopback address')
    .option('--tls-cert <file>', 'TLS certificate (PEM)')
    .option('--tls-key <file>', 'TLS private key (PEM)')
    .option('--seed <file>', 'seed file (YAML or JSON): namespaces, collections, keys with given secrets, rules and files to create at start')
    .option('--detach', 'run in the background: wait until it listens, print its URL, pid and log file, and exit (output in <data-dir>/logs/daemon.out)')
    .option('--stop-with-stdin', 'stop cleanly when stdin closes: a test fixture whose runner dies, even killed, takes its daemon with it')
    .action(async (opts: Record<string, unknown>, cmd: Command) => {
      const dataDir = (opts.dataDir as string | undefined) ?? (cmd.parent?.parent?.opts().dataDir as string | undefined);
      // Loaded only here: the daemon is most of the code, and every other command starts faster without it.
      const { runDaemonStart, runDaemonStartDetached } = await import('./commands/daemon-start.js');
      if (opts.detach) {
        // The child is started with this command line, minus --detach.
        setExitCode(await runDaemonStartDetached({ ...opts, ...(dataDir ? { dataDir } : {}) }, cliArgs()));
        return;
      }
      await runDaemonStart({ ...opts, ...(dataDir ? { dataDir } : {}) });
    });

  program
    .command('status')
    .description('Show whether the daemon is up, and its namespaces and collections')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      setExitCode(await (await import('./commands/status.js')).runStatus(program.opts(), opts));
    });

  program
    .command('ingest')
    .description(
      'Mirror a folder into a collection: add new files, update changed ones, delete removed ones (honours .gitignore); ' +
        'with no folder, re-syncs the folder `trove init` saved into its collection',
    )
    .argument('[folder]', 'folder to ingest (default: the one `trove init` saved)')
    .option('-n, --namespace <name>', 'namespace, created if missing (default: the one `trove init` saved)')
    .option('-c, --collection <name>', 'collection, created if missing (default: the one `trove init` saved, for its folder)')
    .option('--dry-run', 'print the plan and change nothing')
    .option('--no-wait', 'return once files are accepted, without waiting for indexing')
    .option('--watch', 'keep running: re-ingest changes as they happen (after reconciling what changed while nothing watched)')
    .option('--debounce <ms>', 'with --watch: wait this long after the last change before syncing', '300')
    .option('--prune', 'remove every collection file the folder lacks, including ones added through the API or from another folder, without asking')
    .option('-y, --yes', 'remove the files this folder ingested earlier and no longer has, without asking (needed when stdin is not a terminal)')
    .option('--allow-empty', 'let an empty folder empty the collection (with --prune or --yes)')
    .option('--hidden', 'include dotfiles and dot-folders (secret-looking files still need --include-secrets)')
    .option('--include-secrets', 'include files that usually hold secrets (.env*, *.pem, *.key, id_rsa*, .npmrc, .netrc, credentials, …)')
    .option('--exclude <glob>', 'leave out what this .gitignore-style pattern matches, e.g. "*.log" or "build/" (repeatable; added to the saved defaults\' `exclude`)', collect)
    .option('--include-unsupported', 'send files the collection cannot index too (archives, binaries, images when OCR is off); by default they are skipped')
    .option('--json', 'print JSON')
    .action(async (folder: string | undefined, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/ingest-defaults.js')).runIngestWithDefaults(folder, program.opts(), opts));
    });

  program
    .command('search')
    .description('Search a collection: `trove search "<query>"` searches the collection `trove init` saved; `trove search <collection> "<query>"` names one')
    .argument('[collection]', 'collection name or ID, or <namespace>/<collection> (default: the one `trove init` saved)')
    .argument('[query]', 'the query text')
    .option('-n, --namespace <name>', 'namespace (default: the one `trove init` saved, else "default")')
    .option('-c, --collection <name>', 'collection (default: the one `trove init` saved)')
    .addOption(new Option('--mode <mode>', "retrieval mode (default: the API's, semantic when the collection has it)").choices(['keyword', 'semantic']))
    .addOption(new Option('--unit <unit>', 'result unit').choices(['file', 'passage']).default('file'))
    .option('--limit <n>', 'results (1-100)', '10')
    .option('--filter <json>', 'filter clause as JSON')
    .option('--principal <principal...>', 'principals the results may come from (collections with access rules)')
    .option('--explain', "show each result's BM25 and vector contributions and the fused score")
    .option('--cursor <cursor>', 'the next page: the cursor an earlier page printed, with the same query and flags')
    .option('--json', 'print the raw response as JSON')
    .action(async (first: string | undefined, query: string | undefined, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/search.js')).runSearch(first, query, program.opts(), opts));
    });

  program
    .command('answer')
    .description('Answer a question from a collection, with cited sources: `trove answer "<question>"` uses the collection `trove init` saved')
    .argument('[collection]', 'collection name or ID, or <namespace>/<collection> (default: the one `trove init` saved)')
    .argument('[question]', 'the question')
    .option('-n, --namespace <name>', 'namespace (default: the one `trove init` saved, else "default")')
    .option('-c, --collection <name>', 'collection (default: the one `trove init` saved)')
    .addOption(new Option('--mode <mode>', 'how much of the collection to read').choices(['standard', 'ultra', 'recall']).default('standard'))
    .option('--filter <json>', 'filter clause as JSON')
    .option('--principal <principal...>', 'principals the answer may draw from (collections with access rules)')
    .option('--json', 'print the raw response as JSON')
    .action(async (first: string | undefined, question: string | undefined, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/answer.js')).runAnswer(first, question, program.opts(), opts));
    });

  const keys = program.command('keys').description('API keys: create, list, revoke');
  keys
    .command('create')
    .description('Create a key; its secret is printed once')
    .argument('<name>', 'key name (lowercase letters, digits, _ and -)')
    .option('--cluster', 'a cluster key (everything)')
    .option('--namespace <name>', 'the namespace the key may reach')
    .option('--collection <name...>', 'only these collections of the namespace')
    .option('--actions <list>', 'comma-separated: read, write, search, query')
    .option('--json', 'print the key (with its secret) as JSON')
    .action(async (name: string, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/keys.js')).runKeysCreate(name, program.opts(), opts));
    });
  keys
    .command('list')
    .description('List the keys this key administers')
    .option('--json', 'print the keys as JSON')
    .action(async (opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/keys.js')).runKeysList(program.opts(), opts));
    });
  keys
    .command('revoke')
    .description('Revoke a key by its key_ ID (repeating it is harmless)')
    .argument('<id>', 'the key_ ID')
    .option('--json', 'print the revoked key as JSON')
    .action(async (id: string, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/keys.js')).runKeysRevoke(id, program.opts(), opts));
    });

  const rules = program.command('rules').description('Access rules of a collection: set, list, rm, batch, explain');
  const ns = ['-n, --namespace <name>', 'namespace (default: the one `trove init` saved, else "default")'] as const;
  const col = ['-c, --collection <name>', 'collection, instead of the argument (default: the one `trove init` saved)'] as const;
  const optionalCollection = ['[collection]', 'collection, or <namespace>/<collection> (default: -c, else the one `trove init` saved)'] as const;
  rules
    .command('set')
    .description('Create or replace the rule on a folder (/team/) or a file (/team/plan.md)')
    .usage('[options] [collection] <path>')
    .argument(...optionalCollection)
    .argument('[path]', 'a folder ending in / or a file path')
    .option(...col)
    .option('--reader <principal...>', 'who may read (none: nobody)')
    .option('--sealed', 'a sealed folder rule overrides every rule below it')
    .option(...ns)
    .option('--json', 'print the response as JSON')
    .action(async (collection: string | undefined, path: string | undefined, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/rules.js')).runRulesSet(collection, path, program.opts(), opts));
    });
  rules
    .command('list')
    .description('List the rules of a collection')
    .argument(...optionalCollection)
    .option(...col)
    .option(...ns)
    .option('--json', 'print the rules as JSON')
    .action(async (collection: string | undefined, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/rules.js')).runRulesList(collection, program.opts(), opts));
    });
  rules
    .command('rm')
    .description('Delete a rule by its acr_ ID')
    .usage('[options] [collection] <id>')
    .argument(...optionalCollection)
    .argument('[id]', 'the acr_ ID')
    .option(...col)
    .option(...ns)
    .option('--json', 'print the response as JSON')
    .action(async (collection: string | undefined, id: string | undefined, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/rules.js')).runRulesRemove(collection, id, program.opts(), opts));
    });
  rules
    .command('explain')
    .description('Which rule governs a file path, and who can read it')
    .usage('[options] [collection] <path>')
    .argument(...optionalCollection)
    .argument('[path]', 'a file path')
    .option(...col)
    .option(...ns)
    .option('--json', 'print the explanation as JSON')
    .action(async (collection: string | undefined, path: string | undefined, opts: Record<string, unknown>) => {
      setExitCode(await (await import('./commands/rules.js')).runRulesExplain(collection, path, program.opts(), opts));
    });

  program
    .command('completion')
    .description('Print a shell completion script: trove completion bash|zsh|fish')
    .argument('<shell>', 'bash, zsh or fish')
    .action(async (shell: string) => {
      const { runCompletion } = await import('./commands/completion.js');
      setExitCode(runCompletion(shell, program));
    });

  // Each group lives in its own file (src/cli/groups/); they share the global options above.
  registerOperatorCommands(program, daemon);
  registerResourceCommands(program, rules);
  registerWorkflowCommands(program);
  registerTuiCommand(program);
  registerMcpCommand(program);

  return program;
}
