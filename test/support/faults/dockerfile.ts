/** The USER the final stage of a Dockerfile runs as, or undefined when it never sets one. */
export function finalStageUser(dockerfile: string): string | undefined {
  // continuation lines joined, comments dropped: one instruction per line
  const lines = dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  let user: string | undefined;
  for (const line of lines) {
    const [instruction = '', ...rest] = line.split(/\s+/);
    if (/^FROM$/i.test(instruction)) user = undefined;
    else if (/^USER$/i.test(instruction)) user = rest.join(' ');
  }
  return user;
}

/** True for a USER value that still means root (name or uid 0, with or without a group). */
export function isRootUser(user: string): boolean {
  const name = user.split(':')[0]?.trim() ?? '';
  return name === 'root' || name === '0';
}
