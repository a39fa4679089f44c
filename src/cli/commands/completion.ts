// `trove completion bash|zsh|fish`: a completion script generated from the commander tree, so every
// command, subcommand and option the CLI has is completed, and a new one is without more work.
import type { Command } from 'commander';
import { CliError, reportError } from '../client.js';
import { out } from '../io.js';

interface Node {
  /** Space-separated path from the root, '' for the root. */
  path: string;
  subcommands: string[];
  options: string[];
}

function nodes(command: Command, path: string[] = [], inherited: string[] = []): Node[] {
  const own = command.options.flatMap((o) => [o.long, o.short].filter((flag): flag is string => Boolean(flag)));
  const options = [...new Set([...own, ...inherited, '--help'])];
  const here: Node = { path: path.join(' '), subcommands: command.commands.map((c) => c.name()), options };
  // The root's options are global: they apply after any subcommand too.
  const passDown = path.length === 0 ? own : inherited;
  return [here, ...command.commands.flatMap((sub) => nodes(sub, [...path, sub.name()], passDown))];
}

const quote = (words: readonly string[]) => words.join(' ');

export function bashScript(program: Command): string {
  const cases = nodes(program)
    .map((n) => `    '${n.path}') words_here='${quote([...n.subcommands, ...n.options])}' ;;`)
    .join('\n');
  return `# bash completion for trove (trove completion bash > /etc/bash_completion.d/trove, or source it)
_trove() {
  local cur path word i words_here
  cur="\${COMP_WORDS[COMP_CWORD]}"
  path=''
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    case "$word" in -*) continue ;; esac
    if _trove_has "\${path:+$path }$word"; then path="\${path:+$path }$word"; fi
  done
  case "$path" in
${cases}
    *) words_here='' ;;
  esac
  COMPREPLY=( $(compgen -W "$words_here" -- "$cur") )
}
_trove_has() {
  case "$1" in
${nodes(program)
  .filter((n) => n.path !== '')
  .map((n) => `    '${n.path}') return 0 ;;`)
  .join('\n')}
  esac
  return 1
}
complete -o default -F _trove trove
`;
}

export function zshScript(program: Command): string {
  return `#compdef trove
# zsh completion for trove (trove completion zsh > "\${fpath[1]}/_trove")
${bashScript(program)
  .split('\n')
  .filter((line) => !line.startsWith('complete '))
  .join('\n')}
autoload -U +X bashcompinit && bashcompinit
complete -o default -F _trove trove
`;
}

export function fishScript(program: Command): string {
  const lines = ['# fish completion for trove (trove completion fish > ~/.config/fish/completions/trove.fish)', 'complete -c trove -f'];
  for (const n of nodes(program)) {
    const parts = n.path === '' ? [] : n.path.split(' ');
    const children = n.subcommands;
    // A node is current when its path has been typed and none of its children yet.
    const condition =
      parts.length === 0
        ? `not __fish_seen_subcommand_from ${program.commands.map((c) => c.name()).join(' ')}`
        : `__fish_seen_subcommand_from ${parts[parts.length - 1]}${children.length ? `; and not __fish_seen_subcommand_from ${children.join(' ')}` : ''}`;
    for (const sub of children) lines.push(`complete -c trove -n '${condition}' -a '${sub}'`);
    for (const option of n.options) {
      if (option.startsWith('--')) lines.push(`complete -c trove -n '${condition}' -l '${option.slice(2)}'`);
      else lines.push(`complete -c trove -n '${condition}' -s '${option.slice(1)}'`);
    }
  }
  return lines.join('\n') + '\n';
}

export function runCompletion(shell: string, program: Command): number {
  try {
    const scripts: Record<string, (p: Command) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript };
    const make = scripts[shell];
    if (!make) throw new CliError(`trove completion takes bash, zsh or fish, got '${shell}'.`, 2);
    out().write(make(program));
    return 0;
  } catch (err) {
    return reportError(err, false);
  }
}
