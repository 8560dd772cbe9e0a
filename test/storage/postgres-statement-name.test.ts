import { describe, expect, it } from 'vitest';
import {
  statementName,
  statementNames,
} from '../../src/storage/postgres/postgres-statement-name.js';

describe('statementName', () => {
  it('names the hot statements, and the rest by table and command, never by their text', () => {
    const cases: Array<[string, string]> = [
      ['select "id", "name" from "pets" where "id" = $1', 'pet_by_id'],
      ['select "id" from "pets" where "id" > $1 order by "id" limit $2', 'pets_page'],
      ['select "id" from "pets" where "id" > $1 order by "id" limit 21', 'pets_page'],
      ['insert into "pets" ("name") values ($1), ($2) returning "id"', 'pet_insert'],
      ['select * from "api_keys" where "hash" = $1', 'key_by_hash'],
      ['select * from "api_keys" where "previous_hash" = $1', 'key_by_hash'],
      ['DO $$ BEGIN ... END $$', 'readiness_check'],
      ['\n      SELECT (SELECT max(id) FROM pets) AS max_id, concat_ws(...)', 'id_horizon_poll'],
      ['update "api_keys" set "last_used_at" = $1 where "id" = $2', 'api_keys_update'],
      ['UPDATE store_generation SET value = value + 1 WHERE id = 1', 'store_generation_update'],
      ['delete from "key_usage" where "day" < $1', 'key_usage_delete'],
      ['begin', 'begin'],
      ["SET LOCAL lock_timeout = '50ms'", 'set'],
      ['select * from "secret_table_of_someone"', 'other_select'],
      ['CREATE TABLE pets (id bigint)', 'other'],
      ["select 'pa_live_abc' from x", 'other_select'],
    ];
    for (const [sql, name] of cases) expect(statementName(sql), sql).toBe(name);
  });

  it('keeps at most `bound` texts, and names the others all the same', () => {
    const nameOf = statementNames(2);
    for (let i = 0; i < 100; i++) {
      expect(nameOf(`select ${i} from "pets" where "status" = $1`)).toBe('pets_select');
    }
  });
});
