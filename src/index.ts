// The package's main entry (`import { createClient } from 'trove'`): the typed HTTP client. The test
// fixture is its own entry, `trove/testing`, so importing the client never loads the daemon's code.
export * from './client/index.js';
