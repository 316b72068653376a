"""The index-level secrets corpus: formats, generator, contexts and harvested look-alikes."""
