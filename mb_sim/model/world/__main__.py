"""`python -m mb_sim.model.world`: print the world file's JSON Schema (for editors that
complete and check YAML files against a schema)."""

from mb_sim.model.world.schema import schema_json

print(schema_json())
