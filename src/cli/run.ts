// The process entry of the CLI (bin/trove loads the built copy): runs main, reports a crash.
import { main } from './main.js';

main(process.argv).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
