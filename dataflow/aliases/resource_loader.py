"""``tf.resource_loader``: data files beside the calling program
(``_util/resource_files.py``)."""
# ruff: noqa: I001 - this module is a public namespace: explicit re-exports only

from .._util.missing_names import missing_name_hook
from .._util.resource_files import (
    get_data_files_path as get_data_files_path,
    get_path_to_datafile as get_path_to_datafile,
    get_root_dir_with_all_resources as get_root_dir_with_all_resources,
    load_resource as load_resource,
    readahead_file_path as readahead_file_path,
)

__getattr__ = missing_name_hook("resource_loader", __name__)

del missing_name_hook  # not a TF1 name: keep it out of the namespace
