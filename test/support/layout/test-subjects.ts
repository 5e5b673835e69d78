import { dirname, join, normalize } from 'node:path/posix';
import ts from 'typescript';

// The rules of test/layout/tests-find-their-subject.test.ts as pure functions of a tree (path -> text),
// so the test can plant a violation in a small tree and see each rule refuse it (CONTRIBUTING.md, "Tests
// find their subject").

/** Repository paths to file texts: `src/**`, `test/**`, `bench/**` and `sql/api/**` files. */
export type Tree = ReadonlyMap<string, string>;

/** The heading of CONTRIBUTING.md's list of src files tested somewhere other than their mirror. */
export const WHERE_TESTED_HEADING = '## Where a file without a mirrored test is tested';

/** The only file that may define `waitFor`. */
export const WAIT_FOR_HOME = 'test/support/wait-for.ts';

const FUNCTION_LIKE = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.ClassExpression,
]);

/** A file has logic when it holds a function or class body outside type positions (types and constants alone do not). */
export function hasLogic(text: string): boolean {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const visit = (node: ts.Node): boolean => {
    if (ts.isTypeNode(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) return false;
    if (FUNCTION_LIKE.has(node.kind)) return true;
    return ts.forEachChild(node, visit) ?? false;
  };
  return visit(source);
}

/** Where the test of a src file or a SQL API file lives: `src/x/y.ts` -> `test/x/y.test.ts`, `sql/api/c/n.sql` -> `test/sql-api/c/n.test.ts`. */
export function mirrorOf(path: string): string {
  if (path.startsWith('sql/api/')) return path.replace(/^sql\/api\//, 'test/sql-api/').replace(/\.sql$/, '.test.ts');
  return path.replace(/^src\//, 'test/').replace(/\.ts$/, '.test.ts');
}

/** The list under WHERE_TESTED_HEADING: lines "- `src/a/b.ts`: `test/c.test.ts`, `test/d.test.ts`". */
export function parseWhereTested(markdown: string): Map<string, string[]> {
  const start = markdown.indexOf(WHERE_TESTED_HEADING);
  if (start < 0) return new Map();
  const rest = markdown.slice(start + WHERE_TESTED_HEADING.length);
  const end = rest.search(/\n#{1,3} /);
  const section = end < 0 ? rest : rest.slice(0, end);
  const listed = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const match = /^- `([^`]+)`: (.+)$/.exec(line.trim());
    if (!match) continue;
    listed.set(
      match[1] as string,
      [...(match[2] as string).matchAll(/`([^`]+)`/g)].map((m) => m[1] as string),
    );
  }
  return listed;
}

const SPECIFIER = /(?:from|import|import\(|vi\.mock\()\s*['"](\.\.?\/[^'"]+)['"]/g;
/** A repository path named in a string: how a test reaches the code it runs as a child process (`src/cli/main.ts`). */
const SPAWNED = /['"`]((?:src|bench)\/[\w./-]+\.ts)['"`]/g;

/** More SQL API names than this in one src file make it a list of names (the grants), not a caller. */
const NAME_LIST_SIZE = 15;

const graphs = new WeakMap<Tree, Map<string, string[]>>();

const objectIndexes = new WeakMap<Tree, { objects: Map<string, string>; pattern: RegExp }>();

/** A SQL API object is named by its file's name (`sql/api/triage/quarantine_page.sql` -> `quarantine_page`), as a word. */
function sqlObjects(tree: Tree): { objects: Map<string, string>; pattern: RegExp } {
  const known = objectIndexes.get(tree);
  if (known) return known;
  const objects = new Map<string, string>();
  for (const path of tree.keys()) if (path.startsWith('sql/api/') && path.endsWith('.sql')) objects.set(basenameOf(path), path);
  const names = [...objects.keys()].map((name) => name.replace(/[^\w]/g, '\\$&')).join('|') || '(?!)';
  const index = { objects, pattern: new RegExp(`(?<![\\w-])(${names})(?![\\w-])`, 'g') };
  objectIndexes.set(tree, index);
  return index;
}

/**
 * The files `path` imports (relative specifiers, `.js` read as `.ts`, folders as their index), names as a
 * script to run, or calls as SQL API objects (by name, as a word).
 */
export function referencesOf(tree: Tree, path: string): string[] {
  let graph = graphs.get(tree);
  if (!graph) graphs.set(tree, (graph = new Map()));
  const known = graph.get(path);
  if (known) return known;
  const text = tree.get(path) ?? '';
  const found: string[] = [];
  if (!path.endsWith('.sql')) {
    for (const match of text.matchAll(SPECIFIER)) {
      const target = normalize(join(dirname(path), match[1] as string)).replace(/\.js$/, '.ts');
      if (tree.has(target)) found.push(target);
      else if (tree.has(`${target}/index.ts`)) found.push(`${target}/index.ts`);
    }
    for (const match of text.matchAll(SPAWNED)) if (tree.has(match[1] as string)) found.push(match[1] as string);
  }
  const { objects, pattern } = sqlObjects(tree);
  const named = new Set([...text.matchAll(pattern)].map((match) => match[1] as string));
  // a product file naming many objects lists them (the grants) rather than calls them
  if (path.startsWith('src/') && named.size > NAME_LIST_SIZE) named.clear();
  for (const name of named) if (objects.get(name) !== path) found.push(objects.get(name) as string);
  graph.set(path, found);
  return found;
}

/** Every file `from` reaches through its references, itself included. */
export function reach(tree: Tree, from: string): Set<string> {
  const seen = new Set([from]);
  const queue = [from];
  for (let path = queue.pop(); path !== undefined; path = queue.pop()) {
    for (const next of referencesOf(tree, path)) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

const advice = (subject: string) =>
  `write its test at ${mirrorOf(subject)}, or add "- \`${subject}\`: \`test/….test.ts\`" under "${WHERE_TESTED_HEADING}" in CONTRIBUTING.md`;

/** Each src file with logic, and each SQL API file, is tested at its mirror or listed with tests that reach it. */
export function subjectProblems(tree: Tree, listed: ReadonlyMap<string, readonly string[]>): string[] {
  const problems: string[] = [];
  const reached = new Map<string, Set<string>>();
  const reachOf = (test: string) => reached.get(test) ?? reached.set(test, reach(tree, test)).get(test)!;
  for (const [path, text] of tree) {
    const isSrc = path.startsWith('src/') && path.endsWith('.ts');
    const isSql = path.startsWith('sql/api/') && path.endsWith('.sql');
    if (!(isSrc && hasLogic(text)) && !isSql) continue;
    const tests = listed.get(path);
    if (tree.has(mirrorOf(path))) {
      if (tests) problems.push(`${path}: has its mirror ${mirrorOf(path)}; remove its line from CONTRIBUTING.md`);
      continue;
    }
    if (!tests || tests.length === 0) {
      problems.push(`${path}: no test at its mirror; ${advice(path)}`);
      continue;
    }
    for (const test of tests) {
      if (!tree.has(test) || !test.endsWith('.test.ts')) problems.push(`${path}: listed test ${test} does not exist`);
      else if (!reachOf(test).has(path) && !firedIn(path, text, test))
        problems.push(`${path}: listed test ${test} never imports, runs or calls it`);
    }
  }
  for (const path of listed.keys()) {
    const text = tree.get(path);
    if (text === undefined) problems.push(`${path}: listed in CONTRIBUTING.md but does not exist; remove or rename its line`);
    else if (path.endsWith('.ts') && !hasLogic(text))
      problems.push(`${path}: listed in CONTRIBUTING.md but holds no logic; remove its line`);
  }
  return problems.sort();
}

/**
 * A trigger, or a trigger's function, is called by no one by name: a write to its table fires it. Its
 * listed test is then one of its concept's SQL API tests (test/sql-api/<concept>/), which writes that table.
 */
function firedIn(path: string, text: string, test: string): boolean {
  if (!path.startsWith('sql/api/') || !/RETURNS trigger|CREATE OR REPLACE TRIGGER/i.test(text)) return false;
  return test.startsWith(`${dirname(mirrorOf(path))}/`);
}

function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '');
}

/** Test helpers (test/ files that are not tests) live only under test/support/. */
export function helperProblems(paths: Iterable<string>): string[] {
  return [...paths]
    .filter((path) => path.startsWith('test/') && /\.(ts|mts|js|mjs)$/.test(path) && !path.endsWith('.test.ts'))
    .filter((path) => !path.startsWith('test/support/'))
    .map((path) => `${path}: a helper outside test/support/; move it there (git mv) and fix its imports`)
    .sort();
}

const WAIT_FOR_DEFINITION = /\b(?:function\s+waitFor\b|(?:const|let|var)\s+waitFor\s*=)/;

/** One `waitFor` for the tests and benches, in WAIT_FOR_HOME. */
export function waitForProblems(tree: Tree): string[] {
  const problems = [...tree]
    // the layout tests plant definitions in strings
    .filter(
      ([path, text]) =>
        /^(test|bench)\//.test(path) && !path.startsWith('test/layout/') && path !== WAIT_FOR_HOME && WAIT_FOR_DEFINITION.test(text),
    )
    .map(([path]) => `${path}: defines its own waitFor; import the one in ${WAIT_FOR_HOME}`);
  if (!WAIT_FOR_DEFINITION.test(tree.get(WAIT_FOR_HOME) ?? '')) problems.push(`${WAIT_FOR_HOME}: no waitFor defined`);
  return problems.sort();
}
