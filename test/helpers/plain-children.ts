// Imported for its effect, before anything a test starts: the worker threads and Node processes that
// tests start (a fixture's indexing and vector threads, daemons, CLI runs, npm and tsc) start without
// tap's process-info recorder. tap puts it in every test process twice, as `--import` in execArgv and
// in NODE_OPTIONS, and both reach each worker thread and child; there it routes every module the
// thread imports through its loader, to map which sources a test touched, for coverage, which this
// suite turns off (package.json). It doubled the suite's CPU: answer-api took 14.2 s of CPU with it
// in the workers, 8.0 s without, 7.0 s run by node alone (`/usr/bin/time`, issue 17 item 8).
// NODE_OPTIONS may quote an option (tap writes "--import=file:///…").
const isModuleHook = (arg: string): boolean => /^"?--(import|loader|experimental-loader)=/.test(arg);

process.execArgv.splice(0, process.execArgv.length, ...process.execArgv.filter((arg) => !isModuleHook(arg)));
const options = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((arg) => arg !== '' && !isModuleHook(arg));
if (options.length > 0) process.env.NODE_OPTIONS = options.join(' ');
else delete process.env.NODE_OPTIONS;

export {};
