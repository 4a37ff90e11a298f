"""The platform's partitions, one definition each: a `models` partition per registered release
(name@revision) and a `requests` partition per data-subject request."""

from dagster import DynamicPartitionsDefinition

models_partitions = DynamicPartitionsDefinition(name="models")
requests_partitions = DynamicPartitionsDefinition(name="requests")
