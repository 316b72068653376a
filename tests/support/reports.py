"""Boilerplate that bug reports carry, as issue templates make people paste it."""

from __future__ import annotations

# xarray's `xr.show_versions()`: a system section, a blank line, then one line a package.
SHOW_VERSIONS = """\
INSTALLED VERSIONS
------------------
commit: None
python: 3.11.4 | packaged by conda-forge | (main, Jun 10 2023, 18:08:17) [GCC 12.2.0]
python-bits: 64
OS: Linux
OS-release: 5.15.0-76-generic
machine: x86_64
processor: x86_64
byteorder: little
LC_ALL: None
LANG: en_US.UTF-8
LOCALE: ('en_US', 'UTF-8')
libhdf5: 1.14.1
libnetcdf: 4.9.2

xarray: 2023.7.0
pandas: 2.0.3
numpy: 1.25.1
scipy: 1.11.1
netCDF4: 1.6.4
pydap: None
h5netcdf: 1.2.0
dask: 2023.7.1
matplotlib: 3.7.2
setuptools: 68.0.0
pip: 23.2.1
sphinx: None"""
