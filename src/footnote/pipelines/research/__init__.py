"""The research job (design §5 `research`): outline → plan → investigate → merge → conflicts →
synthesise → check → checklist → brief; the baseline mode beside it for comparison."""
