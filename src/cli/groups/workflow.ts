// `trove init` and the folder workflows beyond a one-shot ingest (`trove ingest --watch`).
import type { Command } from 'commander';

export function registerWorkflowCommands(_program: Command): void {}
