-- Up Migration
-- A batch whose file grew or changed after its claim is replaced by the batch its file was taken again
-- as, whole (README.md, "The drop folder"): this names that batch; null for every other batch.

ALTER TABLE batches ADD COLUMN replaced_by text;

-- Down Migration

ALTER TABLE batches DROP COLUMN replaced_by;
