// `trove ns|collections|files|research|webhooks|events` and `trove rules batch`.
import type { Command } from 'commander';

export function registerResourceCommands(_program: Command, _rules: Command): void {}
