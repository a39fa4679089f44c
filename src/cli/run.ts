// The process entry of the CLI (bin/trove loads the built copy): runs main with the process's own
// I/O, exits with its status, reports a crash.
import { main } from './main.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
