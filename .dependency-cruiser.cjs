// The import rules of src/ (CONTRIBUTING.md, "Layout"). `npm run lint:imports` checks them in CI,
// so the layering cannot drift back (test/layout/import-rules.test.ts plants upward imports to prove it).
// The rooms, top to bottom: cli -> {daemon, operations} -> {ops, console, api, sandbox} and config -> sync -> store-api -> db, intake -> telemetry, log, lib;
// nothing imports cli, only cli imports daemon and operations. Inside src/sync, top to bottom:
//   compose-worker -> outbox -> {version-migration, leadership, retention, statistics, activity} -> poll -> {apply, feed-admin} -> {matching, state}
// A folder may import its own files and any folder below it, never one above or beside it
// (siblings on one level stay independent).

/** sync folders that `folder` may not import: everything on its own level or above. */
const SYNC_LEVELS = [
  ['compose-worker\\.ts'],
  ['outbox'],
  // retention, statistics: the leader's cleaner and ANALYZE task (leader tasks beside the lease loop, which they never import)
  // activity: what a daemon logs about its feed's work (the CLI attaches it beside the worker)
  ['version-migration', 'leadership', 'retention', 'statistics', 'activity'],
  ['poll'],
  // feed-admin: the latest checkpoint move (who moved it), which the activity log names
  ['apply', 'feed-admin'],
  ['matching', 'state'],
];

/**
 * The worker code the CLI and its operations (src/operations) run too, file by file under src/sync, and why. The rest
 * of src/sync is the running worker only; the CLI calls the SQL API through src/store-api (cli-calls-the-client).
 */
const WORKER_CODE_THE_CLI_RUNS = [
  // what a running worker publishes: the cursor problem that status, readiness and resync name alike
  'state/cursor-problem\\.ts',
  // the cleaner's pass and its classes: `purge` runs the one pass the leader's cleaner runs
  'retention/(retention-classes|decisions|purge-pass)\\.ts',
  // the checkpoint the poller reads and moves: `checkpoint`, `events skip` and status read it, `checkpoint reset` and resync move it
  'poll/checkpoint\\.ts',
  // the page's event check, which `prescriptions import` runs on each row before it writes one
  'apply/classify-event\\.ts',
  // registration and rematch, which the outbox's delivery runs too (a sent prescription registers its identity and
  // rematches its held events), with the identity key, the status ranks and the match lock's budget they share
  'matching/(local-prescriptions|sent-prescriptions|rematch|lock-budget|match-lock|status-rank|identity-key|identity-row)\\.ts',
  // the feed's sources the worker polls, their progress and the source lock the outbox's claim takes
  'version-migration/(feed-sources|migration-progress|source-plan|source-lock)\\.ts',
  // the lease and the pauses every replica's worker honours: `feeds pause|resume|list` and status's lease holder
  'leadership/(feed-pauses|feed-roster|lease|lease-holder-name|errors/feed-pause-refused-error)\\.ts',
];

const syncRules = SYNC_LEVELS.flatMap((level, depth) =>
  level.flatMap((folder) => {
    const forbidden = SYNC_LEVELS.slice(0, depth + 1)
      .flat()
      .filter((other) => other !== folder);
    if (forbidden.length === 0) return [];
    return [{
      name: `sync-layers-${folder.replace(/\\\\\.ts$/, '').replace(/\W/g, '')}`,
      comment: `src/sync/${folder} may only import sync folders below it`,
      severity: 'error',
      from: { path: `^src/sync/${folder}` },
      to: { path: `^src/sync/(${forbidden.join('|')})` },
    }];
  }),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import circles, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-is-generic',
      comment: 'src/lib holds waits and backoff with no domain: it imports nothing else of ours',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'contract-stands-alone',
      comment: "src/intake is the operator's contract: both sides import it, it imports only lib, the logger type and the spans of src/telemetry",
      severity: 'error',
      from: { path: '^src/intake/' },
      to: { path: '^src/', pathNot: '^src/(intake|lib|telemetry)/|^src/log/log\\.ts$' },
    },
    {
      name: 'sandbox-not-vendor',
      comment: 'the simulated operator never imports the vendor side',
      severity: 'error',
      from: { path: '^src/sandbox/' },
      to: { path: '^src/(sync|api|db|ops|cli)/' },
    },
    {
      name: 'db-is-mechanics',
      comment: 'store mechanics import no feature folder',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/(sync|api|ops|cli|sandbox)/' },
    },
    {
      name: 'sync-takes-settings',
      comment: 'src/sync is handed its settings: it never reads config, feeds files, the daemon, the CLI, the ops server or the public API',
      severity: 'error',
      from: { path: '^src/sync/' },
      to: { path: '^src/(config/|cli/|daemon/|ops/|api/|sandbox/|index\\.ts)' },
    },
    {
      name: 'api-without-worker',
      comment: 'the public Node API and its change follower never import the worker',
      severity: 'error',
      from: { path: '^src/(api/|index\\.ts)' },
      to: { path: '^src/(sync|cli|ops|sandbox)/' },
    },
    {
      name: 'ops-reads-state',
      comment: 'the health server reads state; it never builds workers or commands',
      severity: 'error',
      from: { path: '^src/ops/' },
      to: { path: '^src/(cli/|daemon/|sync/compose-worker\\.ts)' },
    },
    {
      name: 'only-daemon-builds-workers',
      comment: 'only src/daemon wires running workers',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(daemon/|sync/compose-worker\\.ts)' },
      to: { path: '^src/sync/compose-worker\\.ts$' },
    },
    {
      name: 'cli-is-the-top',
      comment: 'src/cli is the front door: it imports any room, and no other room imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'operations-serve-the-cli',
      comment:
        'src/operations holds what a CLI command runs that is neither the running worker nor one SQL API call (resync, the subscription migration, the previews): only the CLI imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli|operations)/' },
      to: { path: '^src/operations/' },
    },
    {
      name: 'operations-are-handed-settings',
      comment:
        'src/operations is handed its settings and its store by the command that runs it: it never reads config, the CLI, the daemon, a front door or the simulator',
      severity: 'error',
      from: { path: '^src/operations/' },
      to: { path: '^src/(config|cli|daemon|console|ops|api|sandbox)/|^src/index\\.ts$' },
    },
    {
      name: 'daemon-never-imports-cli',
      comment: 'src/daemon runs the worker for any launcher: it never imports the CLI (its errors carry their exit code)',
      severity: 'error',
      from: { path: '^src/daemon/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'only-cli-runs-the-daemon',
      comment: 'src/daemon is started by the CLI: nothing below it (sync, ops, db, config, console...) imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(cli|daemon)/' },
      to: { path: '^src/daemon/' },
    },
    {
      name: 'console-stands-apart',
      comment: 'the operator console (its own server, people signed in as database roles) never imports the CLI, the daemon, the worker, ops or the simulator',
      severity: 'error',
      from: { path: '^src/console/' },
      to: { path: '^src/(cli|daemon|sync|ops|sandbox)/' },
    },
    {
      name: 'config-below-the-runners',
      comment: 'src/config reads the environment and the feeds file; it imports only the vocabulary below it (db names, intake, lib, sync constants)',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/(cli|daemon|console|ops|api|sandbox)/|^src/index\\.ts$' },
    },
    {
      name: 'log-stands-alone',
      comment: 'src/log (the logger, its redaction and unique keys) imports nothing of ours but lib, so every room may log',
      severity: 'error',
      from: { path: '^src/log/' },
      to: { path: '^src/', pathNot: '^src/(log|lib)/' },
    },
    {
      name: 'store-api-is-the-client',
      comment:
        'src/store-api is the one typed client of the SQL API, below every front door and the worker: it imports only store mechanics (db), lib, the contract and the logger',
      severity: 'error',
      from: { path: '^src/store-api/' },
      to: { path: '^src/', pathNot: '^src/(store-api|db|lib|intake|log)/' },
    },
    {
      name: 'front-doors-call-the-client',
      comment:
        'the console, the public API and ops call the SQL API through src/store-api, never through the worker: of src/sync they read only what a running worker publishes (state) and the retention classes their metrics name',
      severity: 'error',
      from: { path: '^src/(console|api|ops)/|^src/index\\.ts$' },
      to: { path: '^src/sync/', pathNot: '^src/sync/(state/|retention/retention-classes\\.ts$)' },
    },
    {
      name: 'cli-calls-the-client',
      comment:
        'the CLI and its operations call the SQL API through src/store-api, never through the worker: of src/sync they import only the worker code they run too (WORKER_CODE_THE_CLI_RUNS)',
      severity: 'error',
      from: { path: '^src/(cli|operations)/' },
      to: { path: '^src/sync/', pathNot: `^src/sync/(${WORKER_CODE_THE_CLI_RUNS.join('|')})$` },
    },
    {
      name: 'telemetry-stands-alone',
      comment:
        'src/telemetry (spans, the attribute allow-list, the lazily loaded OpenTelemetry SDK) imports nothing of ours but lib and the version, so every room may trace',
      severity: 'error',
      from: { path: '^src/telemetry/' },
      to: { path: '^src/', pathNot: '^src/(telemetry|lib)/|^src/version\\.ts$' },
    },
    {
      name: 'src-not-test',
      comment: 'product code never imports test helpers',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    ...syncRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
