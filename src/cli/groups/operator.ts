// `trove daemon stop|status|logs` and `trove config …`: commands served by the operator channel.
import type { Command } from 'commander';

export function registerOperatorCommands(_program: Command, _daemon: Command): void {}
