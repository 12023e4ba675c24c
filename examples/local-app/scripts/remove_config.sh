#!/bin/bash
# config.delete: remove this deployment's folder.
rm -rf "$(ctx instance runtime-properties folder)"
