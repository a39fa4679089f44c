// `trove tui`: the Ink terminal UI.
import type { Command } from 'commander';

export function registerTuiCommand(_program: Command): void {}
