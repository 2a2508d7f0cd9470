-- 0022: finding todos by their title (docs/design/todos.md, "Finding todos"). A trigram
-- GIN index answers `title ILIKE '%text%'` by reading the rows that match, not the
-- backlog. It sits on a side table written once per todo, not on todos: every claim and
-- completion is a non-HOT update of todos (0011_lean_claim_writes.sql), which would add
-- one GIN entry per trigram of the title (up to ~200) to every transition. A title never
-- changes after create, so the side table is written on insert and deleted with its todo;
-- the claim path pays nothing. Self-test todos are not searchable, as no list shows them.
-- pg_trgm is a trusted extension (PostgreSQL 13+): a database owner without superuser
-- may create it, and both the external and the embedded server ship it.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE todo_titles (
  endpoint_id text NOT NULL,
  id          text NOT NULL,
  title       text NOT NULL,
  PRIMARY KEY (endpoint_id, id)
);

-- A small pending list (256 kB, not the default 4 MB): creates append their trigrams to it
-- and it is merged into the index in batches, which keeps a create cheap; every search
-- also reads the pending list whole, so its size bounds that extra read, and at 4 MB it
-- would make the planner price the index above a scan of the table
-- (bench/README.md, "Title search").
CREATE INDEX todo_titles_trgm_idx ON todo_titles USING gin (title gin_trgm_ops) WITH (gin_pending_list_limit = 256);

INSERT INTO todo_titles (endpoint_id, id, title)
SELECT endpoint_id, id, title FROM todos WHERE NOT synthetic;

CREATE FUNCTION todo_titles_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO todo_titles (endpoint_id, id, title)
  SELECT n.endpoint_id, n.id, n.title FROM born n WHERE NOT n.synthetic;
  RETURN NULL;
END
$$;

CREATE TRIGGER todos_insert_titles AFTER INSERT ON todos
  REFERENCING NEW TABLE AS born FOR EACH STATEMENT EXECUTE FUNCTION todo_titles_insert();

CREATE FUNCTION todo_titles_cascade() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM todo_titles s USING gone g WHERE s.endpoint_id = g.endpoint_id AND s.id = g.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER todos_delete_titles AFTER DELETE ON todos
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION todo_titles_cascade();
