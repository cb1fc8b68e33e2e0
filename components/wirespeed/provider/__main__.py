"""``python -m wirespeed.provider ENGINE_ADDRESS``: serve the components to the engine (what
``provider/bin/pulumi-resource-wirespeed`` runs); ``python -m wirespeed.provider schema``: print the package schema
(``make regen`` writes it to ``provider/schema.json``)."""

from __future__ import annotations

import json
import sys

from wirespeed.provider.host import schema, serve

if sys.argv[1:] == ["schema"]:
    print(json.dumps(schema(), indent=2, sort_keys=True))
else:
    serve()
