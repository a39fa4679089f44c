// `trove daemon start --detach`: a background daemon that `daemon stop` and `daemon logs` work on,
// and a start that fails (the data dir is held) reported with the child's error and exit 6.
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { newClusterKey, runCli } from './helpers/cli.js';


t.test('daemon start --detach, then stop and logs', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'trove-detach-'));
  const env = { TROVE_CLUSTER_KEY: newClusterKey() };
  let pid: number | undefined;
  t.teardown(async () => {
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already stopped, as it should be.
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  const started = await runCli(['daemon', 'start', '--detach', '--data-dir', dataDir, '--port', '0', '--json'], { env });
  t.equal(started.code, 0, started.stderr);
  const report = JSON.parse(started.stdout) as { event: string; url: string; pid: number; data_dir: string; log_file: string };
  pid = report.pid;
  t.match(report, { event: 'started', url: /^http:\/\/127\.0\.0\.1:\d+$/, data_dir: dataDir, log_file: path.join(dataDir, 'logs', 'daemon.log') });
  t.ok(Number.isInteger(report.pid));

  const status = await runCli(['--url', report.url, '--data-dir', dataDir, 'status', '--json'], { env });
  t.equal(status.code, 0, `the CLI exited and the daemon still answers (${status.stderr})`);

  const again = await runCli(['daemon', 'start', '--detach', '--data-dir', dataDir, '--port', '0'], { env });
  t.equal(again.code, 6, 'a data dir another daemon holds: exit 6');
  t.match(again.stderr, /The daemon did not start: .*data dir/i);

  const logs = await runCli(['daemon', 'logs', '--data-dir', dataDir]);
  t.equal(logs.code, 0, logs.stderr);
  t.match(logs.stdout, /listening on http:\/\/127\.0\.0\.1:\d+/);

  const stopped = await runCli(['daemon', 'stop', '--data-dir', dataDir]);
  t.equal(stopped.code, 0, stopped.stderr);
  const down = await runCli(['--url', report.url, '--key', 'k', 'ns', 'list']);
  t.equal(down.code, 9, 'stopped: no daemon answers');
});
