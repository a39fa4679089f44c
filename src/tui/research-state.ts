// A research run as the watch view shows it: which stages are done, which one runs, and which
// copy of a run is the newest when the GET and the events race.
import type { ResearchMode, ResearchRun, TroveEvent } from './types.js';

// decisions.md §7 and src/domain/answer/research.ts: standard skips plan and verify.
const ALL_STAGES = [
  { stage: 'plan', label: 'Planning the queries' },
  { stage: 'retrieve', label: 'Searching the collection' },
  { stage: 'read', label: 'Reading and ranking the evidence' },
  { stage: 'synthesize', label: 'Writing the answer' },
  { stage: 'verify', label: 'Checking every citation' },
];

export function stagesFor(mode: ResearchMode): { stage: string; label: string }[] {
  return mode === 'standard' ? ALL_STAGES.filter((s) => s.stage !== 'plan' && s.stage !== 'verify') : ALL_STAGES;
}

export type StageState = 'done' | 'active' | 'failed' | 'pending';

export interface StageLine {
  step: number;
  total: number;
  stage: string;
  label: string;
  state: StageState;
}

/** Every stage of the run with its state, from the run's latest progress and status. */
export function researchStages(run: ResearchRun): StageLine[] {
  const planned = stagesFor(run.mode);
  const total = run.progress?.total_steps ?? planned.length;
  const current = run.progress?.step ?? 0;
  const lines: StageLine[] = [];
  for (let step = 1; step <= total; step++) {
    const known = step === current && run.progress ? { stage: run.progress.stage, label: run.progress.label } : planned[step - 1];
    let state: StageState;
    if (run.status === 'succeeded') state = 'done';
    else if (step < current) state = 'done';
    else if (step === current) state = run.status === 'running' || run.status === 'queued' ? 'active' : run.status === 'failed' ? 'failed' : 'pending';
    else state = 'pending';
    lines.push({ step, total, stage: known?.stage ?? `step ${step}`, label: known?.label ?? `Step ${step}`, state });
  }
  return lines;
}

/** The newer of two copies of a run (by updated_at; on a tie, the one that came later). */
export function newerRun(existing: ResearchRun | undefined, incoming: ResearchRun): ResearchRun {
  if (!existing) return incoming;
  return incoming.updated_at >= existing.updated_at ? incoming : existing;
}

/** The run an event carries, for research.updated and research.progress events. */
export function runFromEvent(event: TroveEvent): ResearchRun | undefined {
  if (event.type !== 'research.updated' && event.type !== 'research.progress') return undefined;
  const data = event.data as Partial<ResearchRun>;
  return typeof data.id === 'string' && typeof data.status === 'string' && typeof data.updated_at === 'string' ? (data as ResearchRun) : undefined;
}

export const isFinished = (run: ResearchRun): boolean => run.status === 'succeeded' || run.status === 'failed' || run.status === 'canceled';
