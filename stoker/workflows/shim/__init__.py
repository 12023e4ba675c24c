"""Put first on a Python script's PYTHONPATH: ``cloudify`` there is Cloudify's script API, answered by Stoker."""
