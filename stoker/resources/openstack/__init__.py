"""Every OpenStack resource type Heat registers, validated against Heat's schemas and simulated
offline: ``catalogue`` reads the shipped schema data (``heat_types.json``, written by
``scripts/openstack-schemas``), ``schemas`` turns an entry into Stoker schemas, ``simulated`` is
the resource class built from them, ``shapes`` the realistic attribute values it answers,
``inventory`` the cloud a user describes (what service constraints check against), ``faults``
the failures a user injects."""
