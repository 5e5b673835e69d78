import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseManifest, readSqlApiFiles, SQL_API_FOLDER } from '../../src/db/sql-api-files.js';
import { splitSqlStatements } from '../../src/db/sql-statements.js';

describe('splitSqlStatements', () => {
  it('splits at the semicolons outside bodies, strings, quoted names and comments', () => {
    const text = [
      '-- a comment; not a statement\nCREATE OR REPLACE FUNCTION "s"."f"(x text) RETURNS text LANGUAGE plpgsql AS $$\nBEGIN RETURN x || \';\'; END\n$$;',
      '\n\nREVOKE ALL ON FUNCTION "s"."f"(text) FROM PUBLIC;',
      '\nCOMMENT ON FUNCTION "s"."f"(text) IS \'it\'\'s; fine\';',
      '\nSELECT 1 AS "a;b" /* ; */, $tag$ $$ ; $tag$;',
      '\n-- trailing comment only\n',
    ].join('');
    const statements = splitSqlStatements(text);
    expect(statements).toHaveLength(4);
    expect(statements[0]).toContain("RETURN x || ';'; END\n$$;");
    expect(statements[2]).toContain("IS 'it''s; fine';");
    expect(statements[3]).toContain('$tag$ $$ ; $tag$;');
    expect(`${statements.join('')}\n-- trailing comment only\n`).toBe(text);
  });
});

describe('parseManifest', () => {
  it('reads one <concept>/<name>.sql per line, skipping comments and blank lines', () => {
    expect(parseManifest('# head\n\nfeeds/_require_feed.sql  # the gate\naudit/audit_log.sql\n')).toEqual([
      'feeds/_require_feed.sql',
      'audit/audit_log.sql',
    ]);
  });
  it('refuses a line that is not a path, and a path listed twice, naming the line', () => {
    expect(() => parseManifest('feeds/a.sql\n../etc/passwd\n')).toThrow(/line 2: "..\/etc\/passwd" is not a <concept>\/<name>.sql path/);
    expect(() => parseManifest('feeds/a.sql\nfeeds/a.sql\n')).toThrow(/line 2: feeds\/a.sql is listed twice/);
  });
  it('the committed manifest lists every file under sql/api, each a CREATE OR REPLACE of one object', () => {
    const onDisk = readdirSync(SQL_API_FOLDER, { recursive: true, encoding: 'utf8' })
      .filter((p) => p.endsWith('.sql'))
      .sort();
    const listed = readSqlApiFiles();
    expect(listed.map((f) => f.path).sort()).toEqual(onDisk);
    for (const file of listed) {
      const creates = file.statements.filter((s) => /^\s*(--[^\n]*\n\s*)*CREATE\b/i.test(s));
      expect(creates, file.path).toHaveLength(1);
      expect(creates[0], file.path).toMatch(
        /CREATE OR REPLACE (FUNCTION|VIEW) "intake_sync"\.|CREATE OR REPLACE TRIGGER "\w+"\s+[^;]* ON "intake_sync"\./,
      );
    }
  });
});
