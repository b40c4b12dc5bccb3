"""Makes and decodes IDs from Python with the installed `shardid` wheel."""

from shardid import Generator, Layout, __version__

gen = Generator(layout=Layout.INSTAGRAM, shard=5)
print(f"Python (shardid {__version__}), Instagram layout, shard 5:")
for new_id in gen.next_ids(3):
    parts = Layout.INSTAGRAM.decode(new_id)
    print(f"  {new_id}  ->  {parts.datetime.isoformat(timespec='milliseconds')}"
          f"  shard {parts.shard}  sequence {parts.sequence}")
# IDs travel in JSON as strings; decoding takes those too.
print(f"  Discord's documented ID decodes to {Layout.DISCORD.decode('175928847299117063')}")
