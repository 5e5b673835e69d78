import { describe, expect, it } from 'vitest';
import { renderErrorReference } from '../support/cli/error-cases.js';
import { read, section } from '../support/docs/markdown.js';

// docs/commands.md's "Error messages" block is exactly what test/cli/error-lines.test.ts checks the
// built CLI prints: a message changed in the code changes the table there, and this fails until the
// docs say the same (the expected block is in the failure's diff).

describe('docs/commands.md, "Error messages"', () => {
  it('shows each command case of test/support/cli/error-cases.ts, exactly', () => {
    const text = section(read('docs/commands.md').text, /^## Error messages/);
    const block = /```text\n([\s\S]*?)```/.exec(text)?.[1];
    expect(block).toBe(`${renderErrorReference()}\n`);
  });
});
