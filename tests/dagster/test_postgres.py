"""Postgres when configured: the Dagster instance's storage and the registry sensor on a real server."""

from contextlib import closing

import psycopg2
from dagster import AssetKey, AssetMaterialization, SensorResult, build_sensor_context, instance_for_test, materialize

from assets import data as data_assets
from resources import ParquetIOManager, RegistryResource
from sensors import registry as sensors
from tests.fixtures.postgres import new_database
from wikimem_platform.registry import Registry


def postgres_instance(url: str, monkeypatch):
    """The instance the README's dagster.yaml gives: storage from $WIKIMEM_DAGSTER_PG_URL."""
    monkeypatch.setenv("WIKIMEM_DAGSTER_PG_URL", url.replace("postgresql://", "postgresql+psycopg2://", 1))
    return instance_for_test(overrides={"storage": {"postgres": {"postgres_url": {"env": "WIKIMEM_DAGSTER_PG_URL"}}}})


def test_runs_and_materializations_are_stored_in_postgres(postgres_url, tmp_path, monkeypatch):
    with postgres_instance(postgres_url, monkeypatch) as instance:
        result = materialize([data_assets.wikidata_extract, data_assets.property_table], instance=instance,
                             resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))})
        assert result.success
        event = instance.get_latest_materialization_event(AssetKey("property_table"))
        assert event is not None and event.run_id == result.run_id
    with closing(psycopg2.connect(postgres_url)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT run_id, status FROM runs")
        assert cursor.fetchall() == [(result.run_id, "SUCCESS")]
        cursor.execute("SELECT DISTINCT asset_key FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'")
        assert {row[0] for row in cursor.fetchall()} == {
            '["humans"]', '["claims"]', '["value_aliases"]', '["dump_properties"]', '["entity_terms"]',
            '["property_table"]'}


def test_registry_sensor_with_postgres_instance_and_registry(postgres_server, monkeypatch):
    registry_url, instance_url = new_database(postgres_server), new_database(postgres_server)
    registry = Registry(registry_url)
    registry.register(name="smol", source_kind="shipped", source="smollm2-135m-instruct", variant="instruct")
    resources = {"model_registry": RegistryResource(url=registry_url)}
    with postgres_instance(instance_url, monkeypatch) as instance:
        for key in sensors.REFERENCE_KEYS:
            instance.report_runless_asset_event(AssetMaterialization(key))
        with build_sensor_context(instance=instance, resources=resources) as context:
            result = sensors.model_registry_sensor(context)
        assert isinstance(result, SensorResult)
        assert [r.partition_key for r in result.run_requests] == ["smol@1"]
        (request,) = result.dynamic_partitions_requests
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        assert instance.get_dynamic_partitions("models") == ["smol@1"]
        with build_sensor_context(instance=instance, resources=resources, cursor=result.cursor) as context:
            again = sensors.model_registry_sensor(context)
        assert not again.run_requests
    with closing(psycopg2.connect(instance_url)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT partition FROM dynamic_partitions WHERE partitions_def_name = 'models'")
        assert cursor.fetchall() == [("smol@1",)]
