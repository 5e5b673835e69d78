import { readdirSync, readFileSync } from 'node:fs';

export interface SessionProcess {
  pid: number;
  state: string;
  command: string;
}

/**
 * The live processes of a session (Linux /proc), zombies left out: a process that exited but
 * was not reaped yet holds nothing (no port, no lease, no socket). A process started with
 * `spawn(..., { detached: true })` leads a session of its own, whose id is its pid, and
 * everything it starts stays in that session unless it calls setsid itself.
 */
export function sessionProcesses(sessionId: number): SessionProcess[] {
  const found: SessionProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // it exited while we looked
    }
    // "pid (comm) state ppid pgrp session ...": comm may contain spaces and parentheses
    const close = stat.lastIndexOf(')');
    const [state = '', , , session] = stat.slice(close + 2).split(' ');
    if (Number(session) !== sessionId || state === 'Z' || state === 'X') continue;
    let command = stat.slice(stat.indexOf('(') + 1, close);
    try {
      command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim() || command;
    } catch {
      // keep comm
    }
    found.push({ pid: Number(entry), state, command });
  }
  return found;
}

/** Signals a whole process group, ignoring one that is already gone. */
export function killGroup(groupId: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-groupId, signal);
  } catch {
    // gone
  }
}
