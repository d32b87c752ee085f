//! The SQL and Lua texts of the store protocol, written once with `{name}`
//! markers; [`super::store`] renders each in the placeholder style of the
//! drivers that run it and records the parameter order.
//!
//! Rules every text follows (docs/idempotency.md, "Stores"):
//!
//! - the claim takes over exactly where [`decide`](super::decide) says
//!   `execute`, and nowhere else: the record is expired (`expires_at_ms <=
//!   now`), or the key and fingerprint are the same and the lease ended
//!   (`processing`, `lease_until_ms <= now`) or the failure released the
//!   claim (`failed`, by the configured failure handling);
//! - complete, renew and release check the incarnation, `fence` **and**
//!   `created_ms`: cleanup deletes a record and the next claim starts again
//!   at fence 1, so the fence alone would let a holder from before the
//!   deletion complete the new claim (`created_ms` is kept across takeovers
//!   and new after a deletion);
//! - release ends the lease (the next claim takes over with fence + 1); it
//!   never deletes, which would reset the fence;
//! - cleanup deletes by time (`expires_at_ms <= now`) in bounded batches, and
//!   repeats the time condition on the row it deletes, since a claim may
//!   have taken the row over in between;
//! - string literals are single-quoted (better-sqlite3 builds with
//!   `SQLITE_DQS=0`), and the texts contain no `%` (PyMySQL's `%s` form
//!   would need it doubled).

/// The table every dialect uses.
pub const TABLE: &str = "idempotency_records";

pub const SQLITE_SCHEMA: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS idempotency_records (
  storage_key      TEXT    NOT NULL PRIMARY KEY,
  idem_key         TEXT    NOT NULL,
  fingerprint      TEXT    NOT NULL,
  state            TEXT    NOT NULL CHECK (state IN ('processing', 'succeeded', 'failed')),
  fence            INTEGER NOT NULL CHECK (fence >= 1),
  created_ms       INTEGER NOT NULL,
  lease_until_ms   INTEGER NOT NULL,
  completed_ms     INTEGER,
  expires_at_ms    INTEGER NOT NULL,
  response         TEXT,
  failure_category TEXT
)",
    "CREATE INDEX IF NOT EXISTS idempotency_records_expires ON idempotency_records (expires_at_ms)",
];

// PostgreSQL: `response` is TEXT, not jsonb, which would reorder keys and
// rewrite numbers, so the bytes would differ between runtimes.
pub const POSTGRESQL_SCHEMA: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS idempotency_records (
  storage_key      TEXT   NOT NULL PRIMARY KEY,
  idem_key         TEXT   NOT NULL,
  fingerprint      TEXT   NOT NULL,
  state            TEXT   NOT NULL CHECK (state IN ('processing', 'succeeded', 'failed')),
  fence            BIGINT NOT NULL CHECK (fence >= 1),
  created_ms       BIGINT NOT NULL,
  lease_until_ms   BIGINT NOT NULL,
  completed_ms     BIGINT,
  expires_at_ms    BIGINT NOT NULL,
  response         TEXT,
  failure_category TEXT
)",
    "CREATE INDEX IF NOT EXISTS idempotency_records_expires ON idempotency_records (expires_at_ms)",
];

// MariaDB/MySQL: keys are case-sensitive ASCII, so `ascii_bin` (the default
// utf8mb4 collations are case-insensitive and would make "Abc" and "abc" one
// key); 255 ASCII bytes fit the index prefix limit. MEDIUMTEXT, since TEXT
// holds only 64 KiB, and not JSON, which rewrites the bytes.
pub const MYSQL_SCHEMA: [&str; 1] = ["CREATE TABLE IF NOT EXISTS idempotency_records (
  storage_key      VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  idem_key         VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fingerprint      VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state            VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fence            BIGINT NOT NULL,
  created_ms       BIGINT NOT NULL,
  lease_until_ms   BIGINT NOT NULL,
  completed_ms     BIGINT NULL,
  expires_at_ms    BIGINT NOT NULL,
  response         MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  failure_category VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  KEY idempotency_records_expires (expires_at_ms),
  CONSTRAINT idempotency_records_state CHECK (state IN ('processing', 'succeeded', 'failed')),
  CONSTRAINT idempotency_records_fence CHECK (fence >= 1)
) ENGINE=InnoDB"];

// The claim of SQLite: in DO UPDATE, unqualified names are the existing row
// and every SET expression sees the old row. A row comes back only when it
// claimed (inserted, or the WHERE let the update through).
pub const SQLITE_CLAIM: &str = "INSERT INTO idempotency_records
  (storage_key, idem_key, fingerprint, state, fence, created_ms,
   lease_until_ms, completed_ms, expires_at_ms, response, failure_category)
VALUES ({storage_key}, {key}, {fingerprint}, 'processing', 1, {now}, {lease_until_ms}, NULL, {expires_at_ms}, NULL, NULL)
ON CONFLICT (storage_key) DO UPDATE SET
  created_ms = CASE WHEN expires_at_ms <= {now} THEN {now} ELSE created_ms END,
  fence = fence + 1,
  idem_key = excluded.idem_key,
  fingerprint = excluded.fingerprint,
  state = 'processing',
  lease_until_ms = excluded.lease_until_ms,
  completed_ms = NULL,
  expires_at_ms = excluded.expires_at_ms,
  response = NULL,
  failure_category = NULL
WHERE expires_at_ms <= {now}
   OR (idem_key = excluded.idem_key AND fingerprint = excluded.fingerprint
       AND ((state = 'processing' AND lease_until_ms <= {now})
         OR (state = 'failed'
             AND ({failure_handling} = 'execute'
               OR ({failure_handling} = 'by_category'
                   AND instr(',' || {release_categories} || ',', ',' || failure_category || ',') > 0)))))
RETURNING fence, created_ms";

// PostgreSQL needs the target aliased in DO UPDATE (an unqualified `fence`
// is ambiguous there) and the text parameter typed for `||`.
pub const POSTGRESQL_CLAIM: &str = "INSERT INTO idempotency_records AS r
  (storage_key, idem_key, fingerprint, state, fence, created_ms,
   lease_until_ms, completed_ms, expires_at_ms, response, failure_category)
VALUES ({storage_key}, {key}, {fingerprint}, 'processing', 1, {now}, {lease_until_ms}, NULL, {expires_at_ms}, NULL, NULL)
ON CONFLICT (storage_key) DO UPDATE SET
  created_ms = CASE WHEN r.expires_at_ms <= {now} THEN {now} ELSE r.created_ms END,
  fence = r.fence + 1,
  idem_key = excluded.idem_key,
  fingerprint = excluded.fingerprint,
  state = 'processing',
  lease_until_ms = excluded.lease_until_ms,
  completed_ms = NULL,
  expires_at_ms = excluded.expires_at_ms,
  response = NULL,
  failure_category = NULL
WHERE r.expires_at_ms <= {now}
   OR (r.idem_key = excluded.idem_key AND r.fingerprint = excluded.fingerprint
       AND ((r.state = 'processing' AND r.lease_until_ms <= {now})
         OR (r.state = 'failed'
             AND (CAST({failure_handling} AS TEXT) = 'execute'
               OR (CAST({failure_handling} AS TEXT) = 'by_category'
                   AND strpos(',' || CAST({release_categories} AS TEXT) || ',', ',' || r.failure_category || ',') > 0)))))
RETURNING r.fence, r.created_ms";

// MariaDB/MySQL claim in two steps, independent of CLIENT_FOUND_ROWS and of
// the left-to-right evaluation of assignments: a plain insert (autocommit;
// a duplicate key is error 1062), then this update of the existing row,
// whose WHERE is evaluated once on the locked current row. `created_ms` is
// assigned before `expires_at_ms`, which it reads. Affected rows 1 means it
// claimed (the fence always changes).
pub const MYSQL_CLAIM_INSERT: &str = "INSERT INTO idempotency_records
  (storage_key, idem_key, fingerprint, state, fence, created_ms,
   lease_until_ms, completed_ms, expires_at_ms, response, failure_category)
VALUES ({storage_key}, {key}, {fingerprint}, 'processing', 1, {now}, {lease_until_ms}, NULL, {expires_at_ms}, NULL, NULL)";

pub const MYSQL_CLAIM_UPDATE: &str = "UPDATE idempotency_records SET
  created_ms = CASE WHEN expires_at_ms <= {now} THEN {now} ELSE created_ms END,
  fence = fence + 1,
  idem_key = {key},
  fingerprint = {fingerprint},
  state = 'processing',
  lease_until_ms = {lease_until_ms},
  completed_ms = NULL,
  expires_at_ms = {expires_at_ms},
  response = NULL,
  failure_category = NULL
WHERE storage_key = {storage_key}
  AND (expires_at_ms <= {now}
       OR (idem_key = {key} AND fingerprint = {fingerprint}
           AND ((state = 'processing' AND lease_until_ms <= {now})
             OR (state = 'failed'
                 AND ({failure_handling} = 'execute'
                   OR ({failure_handling} = 'by_category'
                       AND LOCATE(CONCAT(',', failure_category, ','), CONCAT(',', {release_categories}, ',')) > 0))))))";

pub const READ: &str = "SELECT storage_key, idem_key, fingerprint, state, fence, created_ms,
  lease_until_ms, completed_ms, expires_at_ms, response, failure_category
FROM idempotency_records WHERE storage_key = {storage_key}";

// The incarnation check shared by complete, renew and release.
macro_rules! holder {
    () => {
        "WHERE storage_key = {storage_key} AND fence = {fence} AND created_ms = {created_ms} AND state = 'processing'"
    };
}

pub const COMPLETE: &str = concat!(
    "UPDATE idempotency_records SET
  state = {state}, lease_until_ms = {lease_until_ms}, completed_ms = {completed_ms},
  expires_at_ms = {expires_at_ms}, response = {response}, failure_category = {failure_category}
",
    holder!()
);

// SQLite's two-argument max() and min() are scalar; the others spell them GREATEST and LEAST.
pub const SQLITE_RENEW: &str = concat!(
    "UPDATE idempotency_records SET
  lease_until_ms = max(lease_until_ms, {lease_until_ms}), expires_at_ms = max(expires_at_ms, {expires_at_ms})
",
    holder!()
);

pub const RENEW: &str = concat!(
    "UPDATE idempotency_records SET
  lease_until_ms = GREATEST(lease_until_ms, {lease_until_ms}), expires_at_ms = GREATEST(expires_at_ms, {expires_at_ms})
",
    holder!()
);

pub const SQLITE_RELEASE: &str =
    concat!("UPDATE idempotency_records SET lease_until_ms = min(lease_until_ms, {now})\n", holder!());

pub const RELEASE: &str =
    concat!("UPDATE idempotency_records SET lease_until_ms = LEAST(lease_until_ms, {now})\n", holder!());

// SQLite: the portable form, not relying on SQLITE_ENABLE_UPDATE_DELETE_LIMIT.
pub const SQLITE_CLEANUP: &str = "DELETE FROM idempotency_records
WHERE storage_key IN (SELECT storage_key FROM idempotency_records
                      WHERE expires_at_ms <= {now} ORDER BY expires_at_ms LIMIT {limit})
  AND expires_at_ms <= {now}";

// PostgreSQL's DELETE has no LIMIT; SKIP LOCKED keeps cleanup from waiting on claims.
pub const POSTGRESQL_CLEANUP: &str = "DELETE FROM idempotency_records
WHERE storage_key IN (SELECT storage_key FROM idempotency_records
                      WHERE expires_at_ms <= {now} ORDER BY expires_at_ms LIMIT {limit}
                      FOR UPDATE SKIP LOCKED)
  AND expires_at_ms <= {now}";

// MySQL refuses LIMIT in an IN subquery; its single-table DELETE takes ORDER BY … LIMIT.
pub const MYSQL_CLEANUP: &str =
    "DELETE FROM idempotency_records WHERE expires_at_ms <= {now} ORDER BY expires_at_ms LIMIT {limit}";

// ------------------------------------------------------------------ Redis
//
// One hash per record at KEYS[1] (`<prefix>:<storage_key>`), its fields the
// columns but `storage_key`, values as decimal strings. `now` comes in as an
// argument (never TIME), so Redis decides from the caller's clock as SQL
// does. The key's TTL (`PEXPIREAT expires_at_ms + slack`) is only garbage
// collection; the logical expiry is checked here. Numbers are Lua doubles:
// exact below 2^53, written back with '%.0f'.

/// ARGV: key, fingerprint, now, lease_until_ms, expires_at_ms,
/// failure_handling, release_categories, slack_ms. Returns `{1, fence,
/// created_ms}` when it claimed, else `{0, HGETALL}` for the caller's `decide`.
pub const LUA_CLAIM: &str = r"local k = KEYS[1]
local now = tonumber(ARGV[3])
local r = redis.call('HMGET', k, 'idem_key', 'fingerprint', 'state', 'fence',
                     'created_ms', 'lease_until_ms', 'expires_at_ms', 'failure_category')
local fence, created
if not r[3] then
  fence, created = 1, now
elseif tonumber(r[7]) <= now then
  fence, created = tonumber(r[4]) + 1, now
elseif r[1] == ARGV[1] and r[2] == ARGV[2] and
       ((r[3] == 'processing' and tonumber(r[6]) <= now) or
        (r[3] == 'failed' and (ARGV[6] == 'execute' or
          (ARGV[6] == 'by_category' and r[8] and
           string.find(',' .. ARGV[7] .. ',', ',' .. r[8] .. ',', 1, true))))) then
  fence, created = tonumber(r[4]) + 1, tonumber(r[5])
else
  return {0, redis.call('HGETALL', k)}
end
local function s(x) return string.format('%.0f', x) end
redis.call('DEL', k)
redis.call('HSET', k, 'idem_key', ARGV[1], 'fingerprint', ARGV[2], 'state', 'processing',
           'fence', s(fence), 'created_ms', s(created), 'lease_until_ms', ARGV[4],
           'expires_at_ms', ARGV[5])
redis.call('PEXPIREAT', k, s(tonumber(ARGV[5]) + tonumber(ARGV[8])))
return {1, s(fence), s(created)}
";

/// The holder check of complete, renew and release: ARGV[1] fence, ARGV[2] created_ms.
macro_rules! lua_holder {
    () => {
        r"local k = KEYS[1]
local r = redis.call('HMGET', k, 'fence', 'created_ms', 'state')
if not r[1] or tonumber(r[1]) ~= tonumber(ARGV[1]) or tonumber(r[2]) ~= tonumber(ARGV[2])
   or r[3] ~= 'processing' then
  return 0
end
"
    };
}

/// ARGV: fence, created_ms, state, lease_until_ms, completed_ms,
/// expires_at_ms, response ('' for none), failure_category ('' for none),
/// slack_ms. Returns 1 when stored, 0 when the caller no longer holds the claim.
pub const LUA_COMPLETE: &str = concat!(
    lua_holder!(),
    r"redis.call('HSET', k, 'state', ARGV[3], 'lease_until_ms', ARGV[4], 'completed_ms', ARGV[5],
           'expires_at_ms', ARGV[6])
if ARGV[7] ~= '' then redis.call('HSET', k, 'response', ARGV[7]) end
if ARGV[8] ~= '' then redis.call('HSET', k, 'failure_category', ARGV[8]) end
redis.call('PEXPIREAT', k, string.format('%.0f', tonumber(ARGV[6]) + tonumber(ARGV[9])))
return 1
"
);

/// ARGV: fence, created_ms, lease_until_ms, expires_at_ms, slack_ms. Returns 1
/// when renewed (the lease and expiry never shrink), else 0.
pub const LUA_RENEW: &str = concat!(
    lua_holder!(),
    r"local cur = redis.call('HMGET', k, 'lease_until_ms', 'expires_at_ms')
local lease = math.max(tonumber(cur[1]), tonumber(ARGV[3]))
local expires = math.max(tonumber(cur[2]), tonumber(ARGV[4]))
redis.call('HSET', k, 'lease_until_ms', string.format('%.0f', lease),
           'expires_at_ms', string.format('%.0f', expires))
redis.call('PEXPIREAT', k, string.format('%.0f', expires + tonumber(ARGV[5])))
return 1
"
);

/// ARGV: fence, created_ms, now. Ends the holder's lease (never deletes);
/// returns 1, or 0 when the caller no longer holds the claim.
pub const LUA_RELEASE: &str = concat!(
    lua_holder!(),
    r"local cur = tonumber(redis.call('HGET', k, 'lease_until_ms'))
redis.call('HSET', k, 'lease_until_ms', string.format('%.0f', math.min(cur, tonumber(ARGV[3]))))
return 1
"
);
