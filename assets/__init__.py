"""Dagster assets; each module wires one area of wikimem_platform."""
