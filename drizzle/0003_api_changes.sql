-- filled in by the 0003_api_changes work; a no-op until then
SELECT 1;
