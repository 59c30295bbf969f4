// The extra-WAL build's switch (HC_EXTRA_WAL_BYTES, issue 45): every event the service writes also
// writes one WAL record of exactly HC_EXTRA_WAL_BYTES bytes, in the request's transaction, so that WAL
// per event (the figure every rate of the spec scales with, #823) grows by a known amount.
//
// The record is a transactional logical-decoding message, pg_logical_emit_message(true, prefix,
// payload), which any role may call. Why not an extra index or a padded column on usage_events: the
// app role can change neither, so the switch would have to be the schema's (made by the rig as the
// owner, the same for every variant of a rig), and a nullable column costs every row a null bitmap
// whether it is used or not, which would move the measured baseline itself. A message touches no
// table: with the switch off the service writes exactly what it always wrote; on, it adds records of
// one known size, which pg_walinspect and pg_waldump show as LogicalMessage/MESSAGE and pg_stat_wal
// counts in wal_bytes (xl_tot_len, without the record's alignment to 8 bytes or page headers).
//
// Its size, from PostgreSQL's own structs (unchanged since 9.6): the XLogRecord header (24 bytes), the
// main data's header (XLR_BLOCK_ID_DATA_SHORT, 2 bytes, while the data is under 256 bytes; else
// XLR_BLOCK_ID_DATA_LONG, 5 bytes), then the data: xl_logical_message (24 bytes: dbId, transactional,
// prefix_size, message_size), the prefix with its NUL, the payload.

/** The message's prefix (a logical decoding plugin would see it; nothing here decodes it). */
export const EXTRA_WAL_PREFIX = 'hc_extra_wal';

const XLOG_RECORD = 24;
const LOGICAL_MESSAGE = 24;
const DATA_SHORT = 2;
const DATA_LONG = 5;
const PREFIX = EXTRA_WAL_PREFIX.length + 1;

/** The smallest record a message makes (an empty payload): 63 bytes. */
export const MIN_EXTRA_WAL_BYTES = XLOG_RECORD + DATA_SHORT + LOGICAL_MESSAGE + PREFIX;
/** 1 MiB of extra WAL per event is far past any regression worth finding. */
export const MAX_EXTRA_WAL_BYTES = 1 << 20;
/** The largest record with a short data header (its data 255 bytes); the next possible size is 3 more. */
const LAST_SHORT = XLOG_RECORD + DATA_SHORT + 255;

/** The WAL record's total length (pg_walinspect's record_length) for a payload of `payload` bytes. */
export function messageRecordBytes(payload: number): number {
  const data = LOGICAL_MESSAGE + PREFIX + payload;
  return XLOG_RECORD + (data < 256 ? DATA_SHORT : DATA_LONG) + data;
}

/** The payload that makes a record of exactly `bytes` (one of the sizes extraWalProblem accepts). */
export function payloadFor(bytes: number): number {
  return bytes - MIN_EXTRA_WAL_BYTES - (bytes > LAST_SHORT ? DATA_LONG - DATA_SHORT : 0);
}

/** Why `bytes` cannot be HC_EXTRA_WAL_BYTES (the sentence's end, after the variable's name), or null. */
export function extraWalProblem(bytes: number): string | null {
  if (!Number.isInteger(bytes) || bytes < 0 || bytes > MAX_EXTRA_WAL_BYTES) return `is not a whole number of bytes from 0 (off) to ${MAX_EXTRA_WAL_BYTES}`;
  if (bytes === 0) return null;
  if (bytes < MIN_EXTRA_WAL_BYTES) return `is under ${MIN_EXTRA_WAL_BYTES}, the smallest WAL record a message makes: give 0 (off) or ${MIN_EXTRA_WAL_BYTES} and more`;
  if (bytes > LAST_SHORT && bytes < LAST_SHORT + 1 + DATA_LONG - DATA_SHORT) {
    return `cannot be ${LAST_SHORT + 1}-${LAST_SHORT + DATA_LONG - DATA_SHORT}: a record's data header grows from ${DATA_SHORT} to ${DATA_LONG} bytes at 256 bytes of data, so no record has these sizes; give ${LAST_SHORT} or ${LAST_SHORT + 1 + DATA_LONG - DATA_SHORT}`;
  }
  return null;
}

/**
 * One statement per request: a record per new event ($3 of them), each `repeat('x', $2)` as payload.
 * Prepared by name, like the service's other statements; one round trip whatever the batch.
 */
export const EXTRA_WAL_SQL = {
  name: 'hc_extra_wal',
  text: `SELECT count(pg_logical_emit_message(true, $1::text, repeat('x', $2::int)))::int AS n FROM generate_series(1, $3::int)`,
};
