"""Self-contained HTML pages (inline CSS, no script, no external asset): ``node show -o
html`` (``node_page.py``) and ``fleet capacity -o html`` (``fleet_page.py``). Pure: values
in, one string out."""
