-- The spec's trap: livemode is NOT what the INSERT says. A BEFORE INSERT trigger overwrites it from the
-- app.livemode session setting (unset or empty means false). COPY fires row triggers too, so seeded
-- history, fixtures, keys and pgbench rows land in whatever partition app.livemode names, and only there.
CREATE FUNCTION set_livemode() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.livemode := coalesce(nullif(current_setting('app.livemode', true), '')::boolean, false);
  RETURN NEW;
END
$$;

CREATE TRIGGER set_livemode BEFORE INSERT ON usage_events FOR EACH ROW EXECUTE FUNCTION set_livemode();
CREATE TRIGGER set_livemode BEFORE INSERT ON customers    FOR EACH ROW EXECUTE FUNCTION set_livemode();
CREATE TRIGGER set_livemode BEFORE INSERT ON meters       FOR EACH ROW EXECUTE FUNCTION set_livemode();
CREATE TRIGGER set_livemode BEFORE INSERT ON api_keys     FOR EACH ROW EXECUTE FUNCTION set_livemode();
