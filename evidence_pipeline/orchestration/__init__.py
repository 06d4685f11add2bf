"""The thin Dagster layer: assets, resources, sensors and the Definitions that wire the core."""
