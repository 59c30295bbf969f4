-- The one read that happens before the tenant is known: a bearer key's hash -> its tenant and mode.
-- RLS on api_keys would hide every row at that point (app.tenant_id is not set yet), so the lookup is a
-- SECURITY DEFINER function owned by hardcount_owner: it answers exactly one key, by exact hash, and
-- nothing else. search_path is pinned so a caller cannot shadow the table.
CREATE FUNCTION auth_api_key(hash text)
RETURNS TABLE (tenant_id bigint, livemode boolean, key_id bigint, last_used_at timestamptz)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
  SELECT k.tenant_id, k.livemode, k.id, k.last_used_at FROM api_keys k WHERE k.key_hash = hash
$$;

-- Functions are executable by PUBLIC unless revoked; only the app role (through the default privileges
-- made by reference/roles.ts) may call this one.
REVOKE ALL ON FUNCTION auth_api_key(text) FROM PUBLIC;
