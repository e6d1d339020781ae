import csv,sys,collections
rows=collections.OrderedDict()
with open(sys.argv[1]) as f:
    lines=[l for l in f if l.startswith('"')]
for r in csv.DictReader(lines):
    k=r["ID"]; d=rows.setdefault(k,{"name":r["Kernel Name"][:40],"grid":r["Grid Size"]})
    d[r["Metric Name"]]=float(r["Metric Value"].replace(",",""))
tot=0
for k,d in rows.items():
    t=d["gpu__time_duration.sum"]/1000; tot+=t
    print("%4s %-40s %-16s %8.1f us %8.1f MB  cum %8.1f"%(k,d["name"],d["grid"],t,(d["dram__bytes_read.sum"]+d["dram__bytes_write.sum"])/1e6,tot))
