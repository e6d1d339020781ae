import csv,collections,sys
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10 and r[0]!="" ]; rows=rows[[i for i,r in enumerate(rows) if r[0]=="ID"][0]:]
hdr=rows[0]
ki=hdr.index('Kernel Name'); mi=hdr.index('Metric Name'); vi=hdr.index('Metric Value'); ii=hdr.index('ID')
t=collections.defaultdict(float); c=collections.Counter(); by=collections.defaultdict(float)
tot=0
for r in rows[1:]:
    if r[mi]=='gpu__time_duration.sum':
        v=float(r[vi].replace(',',''));t[r[ki][:70]]+=v; c[r[ki][:70]]+=1; tot+=v
    elif r[mi]=='dram__bytes.sum':
        by[r[ki][:70]]+=float(r[vi].replace(',',''))
print('total us',tot/1000, 'kernels',sum(c.values()))
for k,v in sorted(t.items(),key=lambda x:-x[1])[:int(sys.argv[2]) if len(sys.argv)>2 else 30]: print(f"{v/1000:9.1f} {c[k]:5d} {by[k]/1e6:9.1f}MB {k}")
