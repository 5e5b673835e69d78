-- filled in by the 0002_api_register work; a no-op until then
SELECT 1;
