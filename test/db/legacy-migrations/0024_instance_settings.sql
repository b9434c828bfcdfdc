-- What a first start decided for this installation and later starts keep (DESIGN §9, local
-- development): only `local_development`, written by the first `npm start` of an embedded database
-- that listens on loopback, which lets callbacks go to private targets and plain http:// loopback.
CREATE TABLE instance_settings (
  name   text PRIMARY KEY,
  value  text NOT NULL,
  set_at timestamptz NOT NULL
);
