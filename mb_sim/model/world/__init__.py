"""World files: ground, gravity, robots and URDF objects, environment bodies, joints, solver
settings (format and key tables: docs/worlds.md).

`load_world(source)` reads a YAML file (or YAML text, or a dict), or a Gazebo SDF world
(`sdf/`), and returns a frozen `World`.
Every problem raises `mb_sim.errors.WorldError` whose message names the file, the path of the
key (e.g. ``robots[1].initial_positions.joint2``), what is allowed and the offending value.

The package, one idea per module, in the order a file goes through it:

- `source`: a path, YAML text or dict -> the document (strict, safe YAML);
- `schema`: every key declared once as JSON Schema, checked with `jsonschema`;
- `messages`: errors worded alike whether the schema or the code finds them;
- `reader`: a valid document -> `World` (checks across keys and entries);
- `bodies`: a body's shape, mass properties, pose and colour;
- `joints`: a world joint from its entry (both readers make them with it);
- `parts`: the records (`World`, `RobotPlacement`, `Body`, ...), defaults, combine rules;
- `checks`: robot entries against the loaded robot models;
- `tables`: docs/worlds.md's key and limit tables, from the schema;
- `sdf`: Gazebo SDF worlds read into the same records (its own package).
"""

from mb_sim.model.world.bodies import load_body
from mb_sim.model.world.checks import check_gains, check_initial_positions
from mb_sim.model.world.parts import (
    DEFAULT_DENSITY,
    DEFAULT_FRICTION,
    DEFAULT_GRAVITY,
    DEFAULT_RESTITUTION,
    DEFAULT_SELF_COLLISION,
    JOINT_TYPES,
    PALETTE,
    STATIC_COLOR,
    TF_MODES,
    WORLD,
    Body,
    Ground,
    Light,
    RobotPlacement,
    SolverSettings,
    World,
    WorldJoint,
    combine_friction,
    combine_restitution,
)
from mb_sim.model.world.reader import load_world
from mb_sim.model.world.schema import (
    ANGLE,
    DENSITY,
    FRICTION,
    GAIN,
    GRAVITY,
    INERTIA,
    JOINT_FRICTION,
    MASS,
    MAX_WORLD_BYTES,
    POSITION,
    QUAT,
    SCHEMA,
    SIZE,
    SOLVER_RANGES,
    SPEED,
    SPIN,
)
from mb_sim.model.world.source import parse_yaml
from mb_sim.model.world.tables import keys_markdown, limits_markdown

__all__ = [
    "ANGLE", "DEFAULT_DENSITY", "DEFAULT_FRICTION", "DEFAULT_GRAVITY", "DEFAULT_RESTITUTION",
    "DEFAULT_SELF_COLLISION", "DENSITY", "FRICTION", "GAIN", "GRAVITY", "INERTIA",
    "JOINT_FRICTION", "JOINT_TYPES", "MASS", "MAX_WORLD_BYTES", "PALETTE", "POSITION", "QUAT",
    "SCHEMA", "SIZE", "SOLVER_RANGES", "SPEED", "SPIN", "STATIC_COLOR", "TF_MODES", "WORLD",
    "Body", "Ground", "Light", "RobotPlacement", "SolverSettings", "World", "WorldJoint",
    "check_gains", "check_initial_positions", "combine_friction", "combine_restitution",
    "keys_markdown", "limits_markdown", "load_body", "load_world", "parse_yaml",
]
