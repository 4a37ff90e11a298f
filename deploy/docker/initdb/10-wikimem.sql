-- Second database for the model registry (WIKIMEM_REGISTRY_URL); the instance uses "dagster".
CREATE DATABASE wikimem;
