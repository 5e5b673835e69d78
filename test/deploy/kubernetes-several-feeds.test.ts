import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { decideRunMode } from '../../src/daemon/demo-gate.js';
import { loadConfig } from '../../src/config/config.js';
import { configuredFeedNames, resolveFeeds } from '../../src/config/feeds-file.js';
import { SecretFileReader } from '../../src/config/secret-file.js';
import { imageEnv, resolvedEnv } from '../support/deploy/container-env.js';
import { findExecutable, skipReason } from '../support/deploy/tools.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = new URL('../../', import.meta.url);
const kubectl = findExecutable('kubectl');
const skip = kubectl ? false : skipReason('kubectl', 'its built-in kustomize renders the overlay');

/**
 * deploy/kubernetes-several-feeds rendered by kustomize, then the worker's environment and the
 * mounted feeds.json parsed by the daemon's own config and FEEDS_FILE reader, as the pod would.
 */
describe.skipIf(skip)(`deploy/kubernetes-several-feeds against the code${skip ? ` (${skip})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-feeds-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // the kit as an operator fills it in: each git-ignored secrets/*.env from its committed example
  const kit = join(dir, 'deploy');
  for (const part of ['kubernetes', 'kubernetes-several-feeds']) {
    cpSync(new URL(`deploy/${part}`, root).pathname, join(kit, part), { recursive: true });
    for (const file of readdirSync(join(kit, part, 'secrets')).filter((f) => f.endsWith('.env.example'))) {
      cpSync(join(kit, part, 'secrets', file), join(kit, part, 'secrets', file.replace(/\.example$/, '')));
    }
  }
  const rendered = kubectl
    ? parseAllDocuments(execFileSync(kubectl, ['kustomize', join(kit, 'kubernetes-several-feeds')], { encoding: 'utf8' })).map(
        (d) => d.toJS() as Obj,
      )
    : [];

  it('the worker reads every feed of the mounted file with credentials from the Secret mounted as files, and nothing single-feed is left', () => {
    const deployment = rendered.find((m) => m.kind === 'Deployment') as Obj;
    const pod = deployment.spec.template.spec as Obj;
    const container = pod.containers[0] as Obj;
    const env = resolvedEnv(
      container,
      rendered.filter((m) => m.kind === 'Secret'),
    );
    for (const single of ['INTAKE_API_BASE_URL', 'INTAKE_API_KEY', 'INTAKE_API_SECRET', 'FEED_NAME'])
      expect(env[single], single).toBeUndefined();

    // FEEDS_FILE must be the mounted ConfigMap's feeds.json (the generator renames the ConfigMap; the volume follows)
    const feedsFile = env.FEEDS_FILE as string;
    const mount = (container.volumeMounts as Obj[]).find((m) => m.mountPath === dirname(feedsFile)) as Obj;
    expect(mount, `a volume mounted at ${dirname(feedsFile)}`).toBeDefined();
    const volume = (pod.volumes as Obj[]).find((v) => v.name === mount.name) as Obj;
    const configMap = rendered.find((m) => m.kind === 'ConfigMap' && m.metadata.name === volume.configMap.name) as Obj;
    const fileText = configMap.data[basename(feedsFile)] as string;
    expect(fileText, `ConfigMap ${volume.configMap.name} holds ${basename(feedsFile)}`).toBeDefined();

    // the credentials: the Secret mounted as files (never environment: a volume changes in place, the
    // daemon re-reads it), readable by the pod's user through its group and by nobody else
    const secretMount = (container.volumeMounts as Obj[]).find((m) => m.name === 'feed-secrets') as Obj;
    const secretVolume = (pod.volumes as Obj[]).find((v) => v.name === 'feed-secrets') as Obj;
    expect(secretVolume.secret.defaultMode).toBe(0o440);
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup);
    const secret = rendered.find((m) => m.kind === 'Secret' && m.metadata.name === secretVolume.secret.secretName) as Obj;
    expect(secret, `the Secret ${secretVolume.secret.secretName}`).toBeDefined();
    // no content hash in the names: an edit changes the mounted files in place instead of rolling the pods
    expect(volume.configMap.name).toBe('intake-sync-feeds');
    expect(secret.metadata.name).toBe('intake-sync-feeds');
    const localSecrets = join(dir, 'secrets');
    mkdirSync(localSecrets, { recursive: true });
    for (const [key, value] of Object.entries(secret.data as Record<string, string>))
      writeFileSync(join(localSecrets, key), Buffer.from(value, 'base64'), { mode: 0o440 });
    // every file: value of the file points into the Secret's mount, at one of its keys
    const refs = [...fileText.matchAll(/"file:([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.length).toBe(4);
    for (const ref of refs) {
      expect(dirname(ref)).toBe(secretMount.mountPath);
      expect(Object.keys(secret.data), ref).toContain(basename(ref));
    }

    // the pod's view: the file where FEEDS_FILE says, the secret files where the mount puts them
    const local = join(dir, basename(feedsFile));
    writeFileSync(local, fileText.replaceAll(`file:${secretMount.mountPath}/`, `file:${localSecrets}/`));
    const config = loadConfig({ ...imageEnv(new URL('Dockerfile', root)), ...env, FEEDS_FILE: local });
    expect(decideRunMode(config, { demo: false })).toBe('operator');
    const reader = new SecretFileReader();
    const feeds = resolveFeeds(config, { ...env, FEEDS_FILE: local }, reader);
    expect(feeds.map((f) => f.name)).toEqual(['west', 'east']);
    expect(feeds.map((f) => [f.apiKey, f.apiSecret])).toEqual([
      ['west-operator-api-key', 'west-operator-api-secret'],
      ['east-operator-api-key', 'east-operator-api-secret'],
    ]);
    expect(reader.warnings).toEqual([]);

    // the doctor init container checks exactly what the worker runs with: same variables, same mounted file
    const doctor = (pod.initContainers as Obj[]).find((c) => c.name === 'doctor') as Obj;
    expect(doctor.args).toEqual(['doctor']);
    const byName = (list: Obj[]) => [...list].sort((a, b) => String(a.name).localeCompare(String(b.name)));
    expect(byName(doctor.env)).toEqual(byName(container.env));
    // what doctor reads: the feeds file and the database CA, as the daemon mounts them (not its scratch /tmp)
    expect(byName(doctor.volumeMounts)).toEqual(byName(container.volumeMounts.filter((m: Obj) => m.name !== 'tmp')));
  });

  it('the migrate Job reads the same feeds.json (names only, no Secret) and so registers both feeds', () => {
    const job = rendered.find((m) => m.kind === 'Job') as Obj;
    const pod = job.spec.template.spec as Obj;
    const container = pod.containers[0] as Obj;
    const env = resolvedEnv(
      container,
      rendered.filter((m) => m.kind === 'Secret'),
    );
    const feedsFile = env.FEEDS_FILE as string;
    const mount = (container.volumeMounts as Obj[]).find((m) => m.mountPath === dirname(feedsFile)) as Obj;
    const volume = (pod.volumes as Obj[]).find((v) => v.name === mount.name) as Obj;
    const configMap = rendered.find((m) => m.kind === 'ConfigMap' && m.metadata.name === volume.configMap.name) as Obj;
    const local = join(dir, `job-${basename(feedsFile)}`);
    writeFileSync(local, configMap.data[basename(feedsFile)] as string);
    expect(configuredFeedNames(loadConfig({ ...env, FEEDS_FILE: local }))).toEqual(['west', 'east']);
  });
});
