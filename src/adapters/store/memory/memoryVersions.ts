import type { MemoryRecord, VersionedMemory } from '../../../ports/store.js';
import { checkNumber, compareKeys, copyJson, decodeJson, encodeJson } from '../jsonValue.js';
import { copied, kept } from './keptText.js';
import { conflict, ensureOpen, limitOf, type MemoryState } from './memoryState.js';
import { applyDelta, type Delta, deltaBetween, deltaSize } from './textDelta.js';

interface MemoryRow {
  /**
   * The value's JSON; an older version's, once the next version is written, its difference from
   * that one's JSON when that is much smaller (history is read from the latest back, one
   * difference at a time).
   */
  json: string | Delta;
  /**
   * The latest version's value as read once (profiles are read far more often than written);
   * handed out as copies, dropped when a newer version comes.
   */
  parsed: { value: unknown } | undefined;
  version: number;
  at: number;
  source: string | undefined;
}

export class MemoryVersions implements VersionedMemory {
  private readonly namespaces = new Map<string, Map<string, MemoryRow[]>>();

  constructor(private readonly state: MemoryState) {}

  async get<T = unknown>(namespace: string, key: string): Promise<MemoryRecord<T> | undefined> {
    ensureOpen(this.state);
    const versions = this.namespaces.get(namespace)?.get(key);
    const latest = versions?.[versions.length - 1];
    return latest ? latestRecord<T>(namespace, key, latest) : undefined;
  }

  async put<T = unknown>(
    namespace: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number; source?: string } = {},
  ): Promise<MemoryRecord<T>> {
    ensureOpen(this.state);
    const place = `memory "${namespace}/${key}"`;
    const json = kept(encodeJson(value, place));
    checkNumber(options.at, 'at', place);
    checkNumber(options.expectedVersion, 'expectedVersion', place);
    const keys = this.namespaces.get(namespace) ?? new Map<string, MemoryRow[]>();
    const versions = keys.get(key) ?? [];
    const actual = versions.length;
    if (options.expectedVersion !== undefined && options.expectedVersion !== actual)
      throw conflict('memory', `${namespace}/${key}`, options.expectedVersion, actual);
    const row: MemoryRow = {
      json,
      parsed: undefined,
      version: actual + 1,
      at: options.at ?? this.state.now(),
      source: options.source === undefined ? undefined : kept(options.source),
    };
    // The version this one replaces is kept as its difference from it, when that is much smaller.
    const previous = versions[versions.length - 1];
    if (previous) previous.parsed = undefined;
    if (previous && typeof previous.json === 'string') {
      const delta = deltaBetween(json, previous.json);
      if (deltaSize(delta) * 2 < previous.json.length)
        previous.json = delta.map((op) => (typeof op === 'string' ? copied(op) : op));
    }
    versions.push(row);
    keys.set(key, versions);
    this.namespaces.set(namespace, keys);
    // The value just checked, copied (not parsed back from its JSON): read next, as profiles are.
    row.parsed = { value: copyJson(value, place) };
    return latestRecord<T>(namespace, key, row);
  }

  async history<T = unknown>(namespace: string, key: string, limit?: number): Promise<MemoryRecord<T>[]> {
    ensureOpen(this.state);
    const versions = this.namespaces.get(namespace)?.get(key) ?? [];
    const out: MemoryRecord<T>[] = [];
    let text = '';
    for (let i = versions.length - 1; i >= 0 && out.length < limitOf(limit); i--) {
      const row = versions[i] as MemoryRow;
      text = typeof row.json === 'string' ? row.json : applyDelta(text, row.json);
      out.push(toRecord<T>(namespace, key, row, text));
    }
    return out;
  }

  async list<T = unknown>(namespace: string): Promise<MemoryRecord<T>[]> {
    ensureOpen(this.state);
    const keys = this.namespaces.get(namespace);
    if (!keys) return [];
    return [...keys.keys()].sort(compareKeys).flatMap((key) => {
      const versions = keys.get(key) ?? [];
      const latest = versions[versions.length - 1];
      return latest ? [latestRecord<T>(namespace, key, latest)] : [];
    });
  }
}

/** The latest version of a key, its value parsed once and copied out. */
function latestRecord<T>(namespace: string, key: string, row: MemoryRow): MemoryRecord<T> {
  const place = `memory "${namespace}/${key}" version ${row.version}`;
  row.parsed ??= { value: decodeJson<unknown>(row.json, place) };
  return {
    namespace,
    key,
    value: copyJson(row.parsed.value, place) as T,
    version: row.version,
    at: row.at,
    ...(row.source !== undefined ? { source: row.source } : {}),
  };
}

function toRecord<T>(namespace: string, key: string, row: MemoryRow, json: string): MemoryRecord<T> {
  return {
    namespace,
    key,
    value: decodeJson<T>(json, `memory "${namespace}/${key}" version ${row.version}`),
    version: row.version,
    at: row.at,
    ...(row.source !== undefined ? { source: row.source } : {}),
  };
}
