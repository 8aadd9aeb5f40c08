def fु():
    print('uni')
