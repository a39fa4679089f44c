// Types of build-stale.mjs, for the tests that import it (test/build-stale.test.ts).
export declare const BUILD_INPUTS: string[];
export declare const BUILD_STAMP: string;
export declare const BUILD_OUTPUTS: string[];
export declare function newestInput(root: string, inputs?: string[]): { path: string | null; mtimeMs: number };
export declare function buildState(root: string, options?: { inputs?: string[]; stamp?: string; outputs?: string[] }): { stale: boolean; reason: string };
