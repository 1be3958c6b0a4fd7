"""The impulse paradigm: every velocity constraint is a row solved by sequential impulses."""
